import { errors, type ProviderTarget } from '../../../core/spec/index.js';
import { ACCOUNT_HEADER, accountOf } from '../cloudflare-workers-ai/cloudflare-target.js';

/** The request header naming the AI Gateway (a virtual key's stored credential may supply it as a field of that name). */
export const GATEWAY_HEADER = 'x-gateway-cloudflare-gateway-id';

/** Gateway ids are slugs the dashboard accepts; only what could leave the path segment is refused. */
const GATEWAY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** `<base>/<account>/<gateway>/compat`: the gateway's OpenAI-compatible root for this request. */
export function compatRoot(target: ProviderTarget, defaults: { accountId?: string; gatewayId?: string }): string {
  if (!target.headers[ACCOUNT_HEADER] && !defaults.accountId) {
    throw errors.invalidRequest(`Cloudflare AI Gateway needs the account id: send "${ACCOUNT_HEADER}" or set the plugin's accountId param.`, {
      param: ACCOUNT_HEADER,
      code: 'missing_required_header',
    });
  }
  const account = accountOf(target, defaults.accountId);
  const gateway = target.headers[GATEWAY_HEADER] ?? defaults.gatewayId;
  if (gateway === undefined || gateway === '') {
    throw errors.invalidRequest(`Cloudflare AI Gateway needs the gateway id: send "${GATEWAY_HEADER}" or set the plugin's gatewayId param.`, {
      param: GATEWAY_HEADER,
      code: 'missing_required_header',
    });
  }
  if (!GATEWAY_ID.test(gateway)) throw errors.invalidRequest(`"${GATEWAY_HEADER}" must be an AI Gateway id (letters, digits, - and _).`, { param: GATEWAY_HEADER, code: 'invalid_header' });
  return `${target.baseUrl}/${account}/${gateway}/compat`;
}

export { ACCOUNT_HEADER };
