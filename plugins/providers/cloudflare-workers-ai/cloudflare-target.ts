import { errors, type ProviderTarget } from '../../../core/spec/index.js';

/** The request header naming the Cloudflare account (a virtual key's stored credential may supply it as a field of that name). */
export const ACCOUNT_HEADER = 'x-gateway-cloudflare-account-id';

/**
 * Cloudflare shows account ids as 32 hexadecimal characters; the gateway only refuses what could
 * leave the account's path (anything but letters, digits, `-` and `_`), not a length it could not check.
 */
const ACCOUNT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The account a request runs under: its header, else the plugin's `accountId` param; refused when neither is given or it is malformed. */
export function accountOf(target: Pick<ProviderTarget, 'headers'>, fallback: string | undefined): string {
  const account = target.headers[ACCOUNT_HEADER] ?? fallback;
  if (account === undefined || account === '') {
    throw errors.invalidRequest(`Cloudflare Workers AI needs the account id: send "${ACCOUNT_HEADER}" or set the plugin's accountId param.`, {
      param: ACCOUNT_HEADER,
      code: 'missing_required_header',
    });
  }
  if (!ACCOUNT_ID.test(account)) {
    throw errors.invalidRequest(`"${ACCOUNT_HEADER}" must be a Cloudflare account id (letters and digits).`, { param: ACCOUNT_HEADER, code: 'invalid_header' });
  }
  return account;
}

/** The account's Workers AI root: `<base>/accounts/<account>/ai` (its OpenAI-compatible API is `/v1` below it, the native one `/run/<model>`). */
export const accountRoot = (baseUrl: string, account: string): string => `${baseUrl}/accounts/${account}/ai`;
