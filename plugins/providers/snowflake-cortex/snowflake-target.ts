import { errors } from '../../../core/spec/index.js';

/** The request header naming the Snowflake account (a virtual key's stored credential may hold it as a field of that name). */
export const ACCOUNT_HEADER = 'x-gateway-snowflake-account';

/** An account identifier (`orgname-accountname`) or locator with its region (`xy12345.us-east-2.aws`). */
const ACCOUNT = /^[a-z0-9-]{1,255}(\.[a-z0-9-]{1,64}){0,3}$/;

/**
 * `https://<account>.snowflakecomputing.com`: the header's account, else the `account` param's.
 * Underscores become hyphens, as Snowflake's URLs spell account names.
 */
export function accountUrl(headers: Readonly<Record<string, string | undefined>>, fallback: string | undefined): string {
  const raw = headers[ACCOUNT_HEADER] ?? fallback;
  if (!raw) {
    throw errors.invalidRequest(`Snowflake Cortex needs the account: send "${ACCOUNT_HEADER}" (e.g. myorg-myaccount) or set the plugin's account param.`, {
      param: ACCOUNT_HEADER,
      code: 'missing_required_header',
    });
  }
  const account = raw.toLowerCase().replace(/_/g, '-').replace(/\.snowflakecomputing\.com$/, '');
  if (!ACCOUNT.test(account)) {
    throw errors.invalidRequest(`"${ACCOUNT_HEADER}" must be a Snowflake account identifier (orgname-accountname) or locator.`, { param: ACCOUNT_HEADER, code: 'invalid_header' });
  }
  return `https://${account}.snowflakecomputing.com`;
}
