import type { Middleware } from 'koa';
import { MCP_SERVER_NAME } from '../../config/index.js';
import { invalid, optionalEnum, optionalNumber, optionalString, requireObject, requireString } from '../api/validate.js';
import { errors, GatewayError } from '../errors.js';
import type { Router } from '../http/router.js';
import type { McpGateway } from '../mcp/gateway.js';
import { type ApprovedTool, DuplicateMcpServerError, type McpServerRecord, type McpServerSettings, type McpToolCatalogue, servedTools } from '../mcp/server-store.js';
import type { McpGrant, McpServerGrant } from '../vault/records.js';
import type { VaultService } from '../vault/service.js';
import { type AdminGuard, noteAudit } from './guard.js';
import { requestJson } from './json-body.js';

const FIELDS = ['name', 'transport', 'url', 'credential', 'credential_header', 'oauth', 'headers', 'allowed_tools', 'timeout_ms', 'max_result_bytes', 'guardrail_policy', 'on_tool_change', 'tool_requests_per_minute', 'cost_per_call_usd'] as const;
/** Header names a server's `headers` may not set: the transport's own. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'connection', 'transfer-encoding']);
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;

function globList(value: unknown, param: string): string[] {
  if (!Array.isArray(value)) throw invalid('expected an array of tool names or globs.', { param });
  if (value.length > 1000) throw invalid('at most 1000 entries.', { param });
  value.forEach((entry, index) => requireString(entry, `${param}[${index}]`, { nonEmpty: true, max: 256 }));
  return value as string[];
}

/** An `mcp` grant of a virtual key: `{ servers: { "<name>" | "*": { tools: [globs], deny?: [globs] } } }`; null (on a PATCH) removes it. */
export function parseMcpGrant(value: unknown, param = 'mcp'): McpGrant {
  const grant = requireObject(value, param);
  for (const field of Object.keys(grant)) if (field !== 'servers') throw invalid('unknown field; expected servers.', { param: `${param}.${field}` });
  const servers = requireObject(grant.servers, `${param}.servers`);
  if (Object.keys(servers).length > 1000) throw invalid('at most 1000 servers.', { param: `${param}.servers` });
  const parsed: Record<string, McpServerGrant> = {};
  for (const [name, entry] of Object.entries(servers)) {
    const at = `${param}.servers.${name}`;
    if (name !== '*' && !MCP_SERVER_NAME.test(name)) throw invalid('a server name (letters, digits, - and single _) or "*".', { param: at });
    const object = requireObject(entry, at);
    for (const field of Object.keys(object)) if (field !== 'tools' && field !== 'deny') throw invalid('unknown field; expected tools, deny.', { param: `${at}.${field}` });
    parsed[name] = { tools: globList(object.tools, `${at}.tools`), ...(object.deny !== undefined ? { deny: globList(object.deny, `${at}.deny`) } : {}) };
  }
  return { servers: parsed };
}

/** `oauth`: client credentials, the client secret being the server's `credential` (so never shown). */
function parseOAuth(body: Record<string, unknown>): void {
  const oauth = requireObject(body.oauth, 'oauth');
  for (const field of Object.keys(oauth)) if (!['token_url', 'client_id', 'scope', 'audience', 'token_auth'].includes(field)) throw invalid('unknown field; expected token_url, client_id, scope, audience or token_auth.', { param: `oauth.${field}` });
  const tokenUrl = requireString(oauth.token_url, 'oauth.token_url', { nonEmpty: true, max: 2048 });
  if (!/^https?:\/\//i.test(tokenUrl)) throw invalid('expected an http:// or https:// URL.', { param: 'oauth.token_url' });
  requireString(oauth.client_id, 'oauth.client_id', { nonEmpty: true, max: 512 });
  optionalString(oauth.scope, 'oauth.scope');
  optionalString(oauth.audience, 'oauth.audience');
  optionalEnum(oauth.token_auth, 'oauth.token_auth', ['client_secret_basic', 'client_secret_post']);
  if (body.credential === undefined) throw invalid('needs credential: the stored credential whose api_key is the client secret.', { param: 'oauth' });
  if (body.credential_header !== undefined) throw invalid('the access token goes as the Bearer token; credential_header does not apply.', { param: 'credential_header' });
}

/** A server's settings from an admin body (POST, or the whole of a PUT): 400 naming the field. */
export function parseServerSettings(body: Record<string, unknown>): McpServerSettings {
  for (const field of Object.keys(body)) if (!(FIELDS as readonly string[]).includes(field)) throw invalid(`unknown field; expected one of ${FIELDS.join(', ')}.`, { param: field });
  const name = requireString(body.name, 'name');
  if (!MCP_SERVER_NAME.test(name)) throw invalid('1 to 64 letters, digits or -, words joined by single _ (the tool prefix is <name>__).', { param: 'name' });
  if (body.transport === 'stdio') throw invalid('stdio servers are configured in gateway.config.ts (mcp.servers), never through the API.', { param: 'transport' });
  if (body.transport !== 'streamable-http' && body.transport !== 'sse') throw invalid("must be 'streamable-http' or 'sse'.", { param: 'transport' });
  const url = requireString(body.url, 'url', { nonEmpty: true, max: 2048 });
  if (!/^https?:\/\//i.test(url)) throw invalid('expected an http:// or https:// URL.', { param: 'url' });
  optionalString(body.credential, 'credential');
  if (body.credential_header !== undefined) {
    requireString(body.credential_header, 'credential_header');
    if (!HEADER_NAME.test(body.credential_header as string)) throw invalid('expected a header name.', { param: 'credential_header' });
    if (body.credential === undefined) throw invalid('needs credential.', { param: 'credential_header' });
  }
  if (body.oauth !== undefined) parseOAuth(body);
  if (body.headers !== undefined) {
    const headers = requireObject(body.headers, 'headers');
    for (const [header, value] of Object.entries(headers)) {
      if (!HEADER_NAME.test(header) || RESERVED_HEADERS.has(header.toLowerCase())) throw invalid('a header name the transport does not set itself.', { param: `headers.${header}` });
      requireString(value, `headers.${header}`, { max: 8192 });
    }
  }
  if (body.allowed_tools !== undefined) globList(body.allowed_tools, 'allowed_tools');
  optionalNumber(body.timeout_ms, 'timeout_ms', { min: 100, max: 600_000, integer: true });
  optionalNumber(body.max_result_bytes, 'max_result_bytes', { min: 1, max: 100 * 1024 * 1024, integer: true });
  optionalString(body.guardrail_policy, 'guardrail_policy');
  optionalEnum(body.on_tool_change, 'on_tool_change', ['withhold', 'serve-approved']);
  optionalNumber(body.tool_requests_per_minute, 'tool_requests_per_minute', { min: 1, max: 1e9, integer: true });
  optionalNumber(body.cost_per_call_usd, 'cost_per_call_usd', { min: 0, max: 1e6 });
  const settings: Record<string, unknown> = {};
  for (const field of FIELDS) if (body[field] !== undefined) settings[field] = body[field];
  return settings as unknown as McpServerSettings;
}

/**
 * A server as answers show it: header values hidden (a secret belongs in `credential`), with its
 * status, its tools and the tools held back because they changed since they were approved (each
 * with what was approved and what the server lists now, for the dashboard's diff).
 */
function shown(record: McpServerRecord, catalogue: McpToolCatalogue | undefined, approvals: Readonly<Record<string, ApprovedTool>> = {}) {
  const { headers, ...rest } = record;
  const { held } = servedTools({ record, approvals, ...(catalogue ? { catalogue } : {}) });
  const listed = new Set((catalogue?.tools ?? []).map((tool) => tool.name));
  return {
    object: 'mcp_server',
    ...rest,
    ...(headers ? { headers: Object.fromEntries(Object.keys(headers).map((name) => [name, '[hidden]'])) } : {}),
    status: catalogue?.status ?? 'unreachable',
    ...(catalogue?.error ? { status_detail: catalogue.error } : {}),
    tools: (catalogue?.tools ?? []).map((tool) => ({ name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}) })),
    tools_listed_at: catalogue?.listed_at ?? null,
    held_tools: held,
    // The rest of the diff since the approvals (only where the list was read: an unreachable server lists nothing).
    added_tools: catalogue?.status === 'ok' ? [...listed].filter((name) => approvals[name] === undefined) : [],
    removed_tools: catalogue?.status === 'ok' ? Object.keys(approvals).filter((name) => !listed.has(name)) : [],
  };
}

export interface McpServerAdminDependencies {
  readonly guard: AdminGuard;
  readonly body: Middleware;
  readonly mcp: McpGateway;
  readonly service: VaultService;
  readonly checkUrl: (url: string) => Promise<string>;
  readonly policyExists: (name: string) => boolean;
}

/** A PUT's headers whose value is `[hidden]` (as answers show them) keep their stored value: a form can send them back unchanged. */
function keepHiddenHeaders(settings: McpServerSettings, current: McpServerRecord): McpServerSettings {
  if (settings.headers === undefined) return settings;
  const headers = Object.fromEntries(Object.entries(settings.headers).map(([name, value]) => [name, value === '[hidden]' && current.headers?.[name] !== undefined ? current.headers[name] : value]));
  return { ...settings, headers };
}

const notFound = (id: string) => errors.notFound(`No MCP server with id "${id.slice(0, 100)}".`, { code: 'mcp_server_not_found' });

/** The admin API of upstream MCP servers: registering probes the server (initialize + tools/list); an unreachable one is stored with its status. */
export class McpServerActions {
  constructor(private readonly dependencies: McpServerAdminDependencies) {}

  async create(body: Record<string, unknown>) {
    const settings = await this.checked(body);
    const catalogue = await this.dependencies.mcp.catalogue.probe(settings);
    try {
      const created = await this.dependencies.mcp.store.create(settings, catalogue);
      return shown(created, catalogue, await this.dependencies.mcp.store.approvals(created.id));
    } catch (error) {
      throw error instanceof DuplicateMcpServerError ? errors.conflict(error.message, { code: 'duplicate_name', param: 'name' }) : error;
    }
  }

  async list() {
    const store = this.dependencies.mcp.store;
    return Promise.all((await store.list()).map(async (record) => shown(record, await store.catalogue(record.id), await store.approvals(record.id))));
  }

  async get(id: string) {
    const record = await this.dependencies.mcp.store.get(id);
    if (!record) throw notFound(id);
    return shown(record, await this.dependencies.mcp.store.catalogue(id), await this.dependencies.mcp.store.approvals(id));
  }

  /** Approves a tool as the server lists it now (a changed tool is served again, as it is now). */
  async approve(id: string, tool: string) {
    if (!(await this.dependencies.mcp.store.get(id))) throw notFound(id);
    const approved = await this.dependencies.mcp.store.approve(id, tool);
    if (!approved) throw errors.notFound(`The MCP server does not list a tool named "${tool.slice(0, 100)}".`, { code: 'mcp_tool_not_found' });
    return { object: 'mcp_tool_approval', server: id, tool, hash: approved.hash, approved_at: approved.approved_at };
  }

  async versions(id: string) {
    const versions = await this.dependencies.mcp.store.versions(id);
    if (versions.length === 0) throw notFound(id);
    return versions.map((record) => shown(record, undefined));
  }

  async replace(id: string, body: Record<string, unknown>) {
    const current = await this.dependencies.mcp.store.get(id);
    if (!current) throw notFound(id);
    const settings = keepHiddenHeaders(await this.checked(body), current);
    const catalogue = await this.dependencies.mcp.catalogue.probe(settings);
    try {
      const replaced = await this.dependencies.mcp.store.replace(id, settings, catalogue);
      if (!replaced) throw notFound(id);
      return shown(replaced, catalogue, await this.dependencies.mcp.store.approvals(id));
    } catch (error) {
      throw error instanceof DuplicateMcpServerError ? errors.conflict(error.message, { code: 'duplicate_name', param: 'name' }) : error;
    }
  }

  async delete(id: string): Promise<void> {
    if (!(await this.dependencies.mcp.store.delete(id))) throw notFound(id);
  }

  /** Settings checked against what exists: the credential, the policy, the custom-host policy, the configured stdio names. */
  private async checked(body: Record<string, unknown>): Promise<McpServerSettings> {
    const settings = parseServerSettings(body);
    if (this.dependencies.mcp.catalogue.configuredNames().includes(settings.name)) throw invalid(`"${settings.name}" is a stdio server of gateway.config.ts.`, { param: 'name' });
    if (settings.credential !== undefined && !(await this.dependencies.service.credentials.get(settings.credential))) throw invalid(`no stored credential with id "${settings.credential.slice(0, 100)}".`, { param: 'credential' });
    if (settings.guardrail_policy !== undefined && !this.dependencies.policyExists(settings.guardrail_policy)) throw invalid(`no guardrail policy named "${settings.guardrail_policy.slice(0, 100)}" is configured.`, { param: 'guardrail_policy' });
    try {
      await this.dependencies.checkUrl(settings.url);
    } catch (error) {
      throw invalid(error instanceof GatewayError ? error.message.replace('x-gateway-custom-host refused: ', '') : 'refused.', { param: 'url' });
    }
    if (settings.oauth !== undefined) {
      // The token endpoint passes the same custom-host policy as the server.
      try {
        await this.dependencies.checkUrl(settings.oauth.token_url);
      } catch (error) {
        throw invalid(error instanceof GatewayError ? error.message.replace('x-gateway-custom-host refused: ', '') : 'refused.', { param: 'oauth.token_url' });
      }
    }
    return settings;
  }
}

/** Mounts `/admin/mcp-servers` (`mcp.read` and `mcp.write`: organization roles). */
export function mountMcpServerAdmin(router: Router, dependencies: McpServerAdminDependencies): void {
  const { guard, body } = dependencies;
  const actions = new McpServerActions(dependencies);
  router.post('/admin/mcp-servers', guard.require('mcp.write'), body, async (koa) => {
    const created = await actions.create(requestJson(koa));
    noteAudit(koa, { target: { type: 'mcp-server', id: created.id }, changes: { name: { after: created.name } } });
    koa.body = created;
    koa.status = 201;
  });
  router.get('/admin/mcp-servers', guard.require('mcp.read'), async (koa) => {
    koa.body = { object: 'list', data: await actions.list() };
  });
  router.get('/admin/mcp-servers/:id', guard.require('mcp.read'), async (koa) => {
    koa.body = await actions.get(koa.params.id);
  });
  router.get('/admin/mcp-servers/:id/versions', guard.require('mcp.read'), async (koa) => {
    koa.body = { object: 'list', data: await actions.versions(koa.params.id) };
  });
  router.post('/admin/mcp-servers/:id/tools/:tool/approve', guard.require('mcp.write'), async (koa) => {
    koa.body = await actions.approve(koa.params.id, koa.params.tool);
  });
  router.put('/admin/mcp-servers/:id', guard.require('mcp.write'), body, async (koa) => {
    koa.body = await actions.replace(koa.params.id, requestJson(koa));
  });
  router.delete('/admin/mcp-servers/:id', guard.require('mcp.write'), async (koa) => {
    await actions.delete(koa.params.id);
    koa.status = 204;
  });
}
