import { errors } from '../../../core/spec/index.js';

/** The request header naming the workspace host (a virtual key's stored credential may hold it as a field of that name). */
export const HOST_HEADER = 'x-gateway-databricks-host';

/** Workspace hosts on Databricks' three clouds (AWS, Azure, GCP); another host goes through `x-gateway-custom-host` and its policy. */
const WORKSPACE_HOST = /^[a-z0-9-]+(\.[a-z0-9-]+)*\.(cloud\.databricks\.com|azuredatabricks\.net|gcp\.databricks\.com)$/;

/** `https://<workspace host>`: the header's, else the `host` param's. */
export function workspaceUrl(headers: Readonly<Record<string, string | undefined>>, fallback: string | undefined): string {
  const raw = headers[HOST_HEADER] ?? fallback;
  if (!raw) {
    throw errors.invalidRequest(`Databricks needs the workspace host: send "${HOST_HEADER}" (e.g. dbc-1234abcd-5678.cloud.databricks.com) or set the plugin's host param.`, {
      param: HOST_HEADER,
      code: 'missing_required_header',
    });
  }
  const host = raw.replace(/^https:\/\//, '').replace(/\/+$/, '').toLowerCase();
  if (!WORKSPACE_HOST.test(host)) {
    throw errors.invalidRequest(`"${HOST_HEADER}" must be a Databricks workspace host (*.cloud.databricks.com, *.azuredatabricks.net, *.gcp.databricks.com).`, {
      param: HOST_HEADER,
      code: 'invalid_header',
    });
  }
  return `https://${host}`;
}
