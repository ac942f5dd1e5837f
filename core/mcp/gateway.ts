import type { IncomingMessage } from 'node:http';
import type { LookupFunction } from 'node:net';
import type { GatewayError } from '../errors.js';
import type { Logger } from 'pino';
import { requireDependency } from '../require.js';
import type { McpStdioServer } from '../../config/index.js';
import type { LogSink } from '../logs/entry.js';
import type { SharedState } from '../store/state.js';
import type { Credentials } from '../vault/credentials.js';
import type { VirtualKeys } from '../vault/virtual-keys.js';
import { VIRTUAL_KEY_PREFIX } from '../vault/virtual-keys.js';
import type { CompiledPolicy } from '../guardrails/registry.js';
import { McpCatalogue, type UpstreamServer } from './catalogue.js';
import type { ToolGuard } from './guardrails.js';
import { JsonRpcError } from './methods.js';
import { RPC } from './sdk.js';
import { type McpCaller, McpEndpoint, type McpRequestRecord } from './endpoint.js';
import { principalOf } from './grants.js';
import { admitToolCall } from './limits.js';
import { recordMcpRequest } from './log.js';
import { McpServerStore, type McpServerSettings } from './server-store.js';
import { McpSessions } from './sessions.js';
import { withOwnSignal } from './own-signal.js';
import { authorizedFetch, OAuthTokenError, OAuthTokenSource, requestToken } from './oauth.js';
import { type McpModelTools, modelTools } from './model-tools.js';
import type { McpGrant, VirtualKeyRecord } from '../vault/records.js';
import { teamIdOf } from '../vault/team-access.js';

export interface McpGatewayOptions {
  /** The vault's parts, once it started: the shared state, the credentials, the virtual keys. */
  readonly vault: () => { readonly state: SharedState; readonly credentials: Credentials; readonly keys: VirtualKeys };
  /** True when the value is the account key (which holds no MCP grant: 403). */
  readonly isAccountKey: (value: string) => boolean;
  /** The custom-host policy (throws a 400 when refused). */
  readonly checkUrl: (url: string) => Promise<void>;
  /** Counts wrong keys per client address (the gateway's failed-authentication limiter). */
  readonly failedAuth?: (request: IncomingMessage, refusal: GatewayError) => GatewayError;
  /** The policy's connect-time lookup: upstream MCP connections refuse a name re-pointed to a refused address. */
  readonly connectLookup?: LookupFunction;
  readonly stdio: readonly McpStdioServer[];
  readonly refreshMs: number;
  readonly bodyLimitBytes: number;
  readonly sinks: readonly LogSink[];
  /** Whether a request's params and results are logged (the configuration's body logging). */
  readonly bodiesOn: (record: McpRequestRecord) => boolean;
  readonly logger: Logger;
  readonly restartDelaysMs?: readonly number[];
  /** The configured guardrail policies, by name. */
  readonly policy: (name: string) => CompiledPolicy | undefined;
  /** The configuration's `defaultPolicy`: judges the tool calls of a key without a policy of its own. */
  readonly defaultPolicy?: string;
  /** A team by id (read at most a second ago): its `mcp` grant adds to its keys' own. */
  readonly team?: (id: string) => { readonly mcp?: McpGrant } | undefined | Promise<{ readonly mcp?: McpGrant } | undefined>;
  /** Forgets what `team` read for a team whose grant changed (announced by the shared state). */
  readonly teamChanged?: (id: string) => void;
}

/**
 * The MCP gateway of one instance: the stored upstream servers, this instance's connections to
 * them and to its stdio servers, the sessions (shared), and the `/mcp` endpoint.
 */
export class McpGateway {
  readonly catalogue: McpCatalogue;
  readonly sessions: McpSessions;
  readonly endpoint: McpEndpoint;
  /** The tools of model calls (the Responses API's `mcp` tool). */
  readonly models: McpModelTools;
  private storeOf?: McpServerStore;
  /** The OAuth access tokens of servers with client credentials, by server settings. */
  private readonly tokens = new Map<string, OAuthTokenSource>();
  private agent?: { close(): Promise<void> };

  constructor(private readonly options: McpGatewayOptions) {
    this.catalogue = new McpCatalogue({
      store: () => this.store,
      stdio: options.stdio,
      headers: (settings) => this.upstreamHeaders(settings),
      checkUrl: options.checkUrl,
      ...(options.connectLookup ? { fetch: this.guardedFetch(options.connectLookup) } : {}),
      authorized: (settings, base) => this.oauthFetch(settings, base),
      logger: options.logger,
      refreshMs: options.refreshMs,
      ...(options.restartDelaysMs ? { restartDelaysMs: options.restartDelaysMs } : {}),
    });
    this.sessions = new McpSessions(() => options.vault().state);
    const record = recordMcpRequest(options.sinks, options.bodiesOn);
    this.endpoint = new McpEndpoint({
      catalogue: this.catalogue,
      sessions: this.sessions,
      authenticate: (key) => this.authenticate(key),
      bodyLimitBytes: options.bodyLimitBytes,
      toolGuard: (caller, server) => this.toolGuard(caller, server),
      admitToolCall: (caller, server, tool) => this.admit(caller, server, tool),
      ...(options.failedAuth ? { failedAuth: options.failedAuth } : {}),
      publishCancel: (id) => options.vault().state.publish({ kind: 'mcp-cancel', id }),
      record,
    });
    this.models = modelTools({
      catalogue: this.catalogue,
      callerOf: (keyId) => this.callerOfKey(keyId),
      toolGuard: (caller, server) => this.toolGuard(caller, server),
      admitToolCall: (caller, server, tool) => this.admit(caller, server, tool),
      record,
    });
  }

  /** Admits one tool call: the per key and tool rate limit, the server's cost per call on the key's budget. */
  private admit(caller: McpCaller, server: UpstreamServer, tool: string): Promise<() => Promise<void>> {
    return admitToolCall(this.options.vault().state, {
      keyId: caller.keyId,
      ...(caller.limits ? { limits: caller.limits } : {}),
      server: server.name,
      tool,
      ...(server.toolRequestsPerMinute !== undefined ? { requestsPerMinute: server.toolRequestsPerMinute } : {}),
      ...(server.costPerCallUsd !== undefined ? { costUsd: server.costPerCallUsd } : {}),
    });
  }

  /** The stored servers (the vault must have started). */
  get store(): McpServerStore {
    this.storeOf ??= new McpServerStore(this.options.vault().state);
    return this.storeOf;
  }

  /** Starts the configured stdio servers (the vault has started) and listens for cancellations from every instance. */
  async start(): Promise<void> {
    this.options.vault().state.subscribe((event) => {
      if (event.kind === 'mcp-cancel') this.endpoint.cancel(event.id);
      // A server or its tools changed anywhere, or a key's grant: the clients listening here re-list.
      else if (event.kind === 'mcp-server') this.endpoint.listsChanged();
      else if (event.kind === 'virtual-key') this.endpoint.listsChanged({ keyId: event.id });
      else if (event.kind === 'team') {
        // Read the team's grant again before its clients re-list, not up to a second later.
        this.options.teamChanged?.(event.id);
        this.endpoint.listsChanged({ teamId: event.id });
      }
    });
    await this.catalogue.start();
  }

  async close(): Promise<void> {
    this.endpoint.closeStreams();
    await this.catalogue.close();
    await this.agent?.close();
  }

  /**
   * A fetch whose connections resolve names through the custom-host policy's lookup (undici's own
   * fetch and agent, loaded on first use): the URL was checked when the server was registered and
   * is checked again when a connection opens, and this refuses a name re-pointed in between.
   */
  private guardedFetch(lookup: LookupFunction): typeof fetch {
    let guarded: typeof fetch | undefined;
    return (input, init) => {
      if (guarded === undefined) {
        const undici = requireDependency('undici') as typeof import('undici');
        const agent = new undici.Agent({ connect: { lookup } });
        this.agent = agent;
        guarded = withOwnSignal(((url: unknown, options?: Record<string, unknown>) => undici.fetch(url as string, { ...options, dispatcher: agent } as never)) as unknown as typeof fetch);
      }
      return guarded(input, init);
    };
  }

  /**
   * The fetch of a server with OAuth client credentials: each request carries the server's access
   * token (one source per server and settings: fetched from the token endpoint, which passes the
   * custom-host policy, kept until shortly before it expires, fetched again after a 401).
   */
  private oauthFetch(settings: McpServerSettings, base: typeof fetch): typeof fetch | undefined {
    const oauth = settings.oauth;
    if (oauth === undefined || settings.credential === undefined) return undefined;
    const key = JSON.stringify([settings.name, settings.url, oauth, settings.credential]);
    let tokens = this.tokens.get(key);
    if (tokens === undefined) {
      const credential = settings.credential;
      tokens = new OAuthTokenSource(async () => {
        await this.options.checkUrl(oauth.token_url);
        const opened = await this.options.vault().credentials.open(credential);
        if (opened?.apiKey === undefined) throw new OAuthTokenError(`the credential "${credential}" of MCP server "${settings.name}" is missing or has no api_key`);
        return requestToken(base, oauth, opened.apiKey, Math.min(settings.timeout_ms ?? 30_000, 30_000));
      });
      if (this.tokens.size >= 1000) this.tokens.clear();
      this.tokens.set(key, tokens);
    }
    return authorizedFetch(base, tokens);
  }

  /** The headers sent to a stored server: its own, then its credential (a Bearer token, or the raw value of `credential_header`; with `oauth`, the client secret, which never goes to the server). */
  private async upstreamHeaders(settings: McpServerSettings): Promise<Record<string, string>> {
    const headers: Record<string, string> = { ...settings.headers };
    if (settings.credential !== undefined && settings.oauth === undefined) {
      const opened = await this.options.vault().credentials.open(settings.credential);
      if (opened?.apiKey === undefined) throw new Error(`the credential "${settings.credential}" of MCP server "${settings.name}" is missing or has no api_key`);
      if (settings.credential_header !== undefined) headers[settings.credential_header] = opened.apiKey;
      else headers.authorization = `Bearer ${opened.apiKey}`;
    }
    return headers;
  }

  /** The policies judging a tool call: the key's (else the default one), then the server's; a policy no longer configured refuses the call. */
  private toolGuard(caller: McpCaller, server: UpstreamServer): ToolGuard {
    const names = [caller.policy ?? this.options.defaultPolicy, server.guardrailPolicy].filter((name): name is string => name !== undefined);
    const policies = names.map((name) => {
      const policy = this.options.policy(name);
      if (policy === undefined) throw new JsonRpcError(RPC.InternalError, `The guardrail policy "${name}" is not configured; the call was refused rather than served unguarded.`);
      return policy;
    });
    return { policies, records: [], metadata: {} };
  }

  /** A virtual key's caller (a revoked or expired key is no caller); the account key holds no grant. */
  private async authenticate(key: string): Promise<McpCaller | 'account' | undefined> {
    if (!key.startsWith(VIRTUAL_KEY_PREFIX)) return this.options.isAccountKey(key) ? 'account' : undefined;
    return this.callerOf(await this.options.vault().keys.lookup(key));
  }

  /** The caller of a key by its id (a model call's key, which the auth stage identified). */
  private async callerOfKey(keyId: string): Promise<McpCaller | undefined> {
    const keys = this.options.vault().keys;
    return this.callerOf(keys.cached(keyId) ?? (await keys.get(keyId)));
  }

  private async callerOf(record: VirtualKeyRecord | undefined): Promise<McpCaller | undefined> {
    if (record === undefined) return undefined;
    if (record.expires_at !== undefined && Date.parse(record.expires_at) <= Date.now()) return undefined;
    const teamId = teamIdOf(record);
    const team = teamId === undefined || this.options.team === undefined ? undefined : await this.options.team(teamId);
    const principal = principalOf(record, team);
    return { keyId: record.id, keyName: record.name, ...(teamId !== undefined ? { teamId } : {}), ...(principal ? { principal } : {}), logBodies: record.log_bodies !== false, ...(record.guardrail_policy ? { policy: record.guardrail_policy } : {}), ...(record.limits ? { limits: record.limits } : {}) };
  }
}
