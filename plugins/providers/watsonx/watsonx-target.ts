import { errors, type ProviderTarget } from '../../../core/spec/index.js';

/** The request headers this plugin reads (a virtual key's stored credential may hold them as fields of these names). */
export const WATSONX_HEADERS = {
  region: 'x-gateway-watsonx-region',
  projectId: 'x-gateway-watsonx-project-id',
  spaceId: 'x-gateway-watsonx-space-id',
  version: 'x-gateway-watsonx-version',
} as const;

export interface WatsonxDefaults {
  readonly region: string;
  readonly projectId?: string;
  readonly spaceId?: string;
  readonly version: string;
}

const REGION = /^[a-z]{2,4}-[a-z]{2,6}$/;
const ID = /^[A-Za-z0-9-]{1,64}$/;
const VERSION = /^\d{4}-\d{2}-\d{2}$/;

function checked(value: string, pattern: RegExp, header: string, what: string): string {
  if (!pattern.test(value)) throw errors.invalidRequest(`"${header}" must be ${what}.`, { param: header, code: 'invalid_header' });
  return value;
}

/** The region's API host, e.g. `https://us-south.ml.cloud.ibm.com`. */
export function watsonxBaseUrl(headers: Readonly<Record<string, string | undefined>>, defaults: WatsonxDefaults): string {
  const region = checked(headers[WATSONX_HEADERS.region] ?? defaults.region, REGION, WATSONX_HEADERS.region, 'a watsonx region such as us-south or eu-de');
  return `https://${region}.ml.cloud.ibm.com`;
}

/** Where the request runs: a project or a deployment space (exactly one is sent; a header wins over the params). */
export function scopeOf(target: Pick<ProviderTarget, 'headers'>, defaults: WatsonxDefaults): { project_id: string } | { space_id: string } {
  const project = target.headers[WATSONX_HEADERS.projectId];
  const space = target.headers[WATSONX_HEADERS.spaceId];
  if (project !== undefined && space !== undefined) {
    throw errors.invalidRequest(`Send "${WATSONX_HEADERS.projectId}" or "${WATSONX_HEADERS.spaceId}", not both.`, { param: WATSONX_HEADERS.spaceId, code: 'invalid_header' });
  }
  if (project !== undefined) return { project_id: checked(project, ID, WATSONX_HEADERS.projectId, 'a project id') };
  if (space !== undefined) return { space_id: checked(space, ID, WATSONX_HEADERS.spaceId, 'a space id') };
  if (defaults.projectId) return { project_id: defaults.projectId };
  if (defaults.spaceId) return { space_id: defaults.spaceId };
  throw errors.invalidRequest(`watsonx.ai runs a request in a project or a deployment space: send "${WATSONX_HEADERS.projectId}" (or "${WATSONX_HEADERS.spaceId}"), or set the plugin's projectId param.`, {
    param: WATSONX_HEADERS.projectId,
    code: 'missing_required_header',
  });
}

/** The API version date every call carries as `?version=`. */
export const versionOf = (target: Pick<ProviderTarget, 'headers'>, defaults: WatsonxDefaults): string =>
  checked(target.headers[WATSONX_HEADERS.version] ?? defaults.version, VERSION, WATSONX_HEADERS.version, 'a date, YYYY-MM-DD');
