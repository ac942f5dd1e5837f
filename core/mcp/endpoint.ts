import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors, GatewayError, toGatewayError } from '../errors.js';
import { tooLarge } from '../http/body.js';
import { timeOrderedId } from '../ids.js';
import type { McpCatalogue, UpstreamServer } from './catalogue.js';
import type { VirtualKeyLimits } from '../vault/records.js';
import type { McpGuardrailRecord, ToolGuard } from './guardrails.js';
import { mayReachServer, type McpPrincipal } from './grants.js';
import { callTool, initializeResult, JsonRpcError, listTools, type MethodOutcome, type McpScope, negotiatedVersion, outcomeOf } from './methods.js';
import { RPC } from './sdk.js';
import { complete, getPrompt, listPrompts, listResources, listResourceTemplates, readResource } from './resources.js';
import type { McpSession, McpSessions } from './sessions.js';
import type { ProgressUpdate } from './upstream.js';

/** The caller of an MCP request: a virtual key, with its grant when it has one. */
export interface McpCaller {
  readonly keyId: string;
  readonly keyName: string;
  /** The key's team, whose grant adds to the key's own. */
  readonly teamId?: string;
  /** Undefined: the key has no `mcp` grant (403 `mcp_not_granted` at initialize; nothing usable after). */
  readonly principal?: McpPrincipal;
  readonly logBodies: boolean;
  /** The key's guardrail policy. */
  readonly policy?: string;
  /** The key's limits (its budget is charged each tool's cost per call). */
  readonly limits?: VirtualKeyLimits;
}

/** One JSON-RPC request as it is logged: its method, what it reached, how it ended. */
export interface McpRequestRecord {
  readonly traceId: string;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly httpMethod: string;
  readonly path: string;
  readonly caller?: McpCaller;
  readonly sessionId?: string;
  readonly method: string;
  readonly server?: string;
  readonly tool?: string;
  /** The HTTP status of the answer (200 even when the JSON-RPC answer is an error). */
  readonly status: number;
  /** The JSON-RPC error's code, or the gateway error's code (`mcp_not_granted`). */
  readonly errorCode?: string;
  readonly errorMessage?: string;
  readonly params?: unknown;
  readonly result?: unknown;
  /** What the call was charged to the key's budget. */
  readonly costUsd?: number;
  /** The guardrail verdicts a tool call's arguments and result got. */
  readonly guardrails?: readonly McpGuardrailRecord[];
  /** The caller's key, to keep out of anything logged. */
  readonly secrets: readonly string[];
}

export interface McpEndpointOptions {
  readonly catalogue: McpCatalogue;
  readonly sessions: McpSessions;
  /** The caller of a key value; undefined for no live key; `account` for the account key (which holds no grant). */
  readonly authenticate: (key: string) => Promise<McpCaller | 'account' | undefined>;
  readonly bodyLimitBytes: number;
  /** The guardrails of one tool call: the caller's policy (else the default one), then the server's; throws when a named policy is gone. */
  readonly toolGuard: (caller: McpCaller, server: UpstreamServer) => ToolGuard;
  /** Admits one tool call (per key and tool rate limit, cost on the key's budget); resolves with its settle. */
  readonly admitToolCall: (caller: McpCaller, server: UpstreamServer, tool: string) => Promise<() => Promise<void>>;
  /** Counts a wrong key from the request's client address: the 401 to answer, or 429 `too_many_failed_auth` past the limit (as everywhere else). */
  readonly failedAuth?: (request: IncomingMessage, refusal: GatewayError) => GatewayError;
  /** Tells every instance that a client cancelled one of its session's requests. */
  readonly publishCancel: (id: string) => Promise<void>;
  /** Every JSON-RPC request handled (and every refused HTTP request) is recorded once. */
  readonly record: (record: McpRequestRecord) => void;
}

const WWW_AUTHENTICATE = 'Bearer realm="llm-gateway", error="invalid_token", error_description="Send a virtual key as the Bearer token or in x-gateway-api-key."';

interface JsonRpcMessage {
  readonly jsonrpc?: unknown;
  readonly id?: string | number | null;
  readonly method?: unknown;
  readonly params?: unknown;
}

/** The gateway key of an MCP request: `x-gateway-api-key`, else the `Authorization: Bearer` token. */
function keyOf(request: IncomingMessage): string | undefined {
  const explicit = request.headers['x-gateway-api-key'];
  if (typeof explicit === 'string' && explicit !== '') return explicit;
  const authorization = request.headers.authorization;
  return authorization === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
}

async function readBody(request: IncomingMessage, limitBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge(limitBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (body === undefined) {
    response.writeHead(status, headers).end();
    return;
  }
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers }).end(text);
}

/**
 * For a tool call that asks for progress (`params._meta.progressToken`) from a client that takes an
 * event stream: relays each upstream progress update as `notifications/progress` with the client's
 * token, switching the answer to an event stream at the first one; the answer is then its last event.
 */
function progressRelay(message: JsonRpcMessage, response: ServerResponse, headers: Record<string, string>) {
  const token = (message?.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta?.progressToken;
  if (message?.method !== 'tools/call' || (typeof token !== 'string' && typeof token !== 'number')) return undefined;
  let streaming = false;
  const event = (body: unknown) => response.write(`event: message\ndata: ${JSON.stringify(body)}\n\n`);
  return {
    streaming: () => streaming,
    relay(progress: ProgressUpdate) {
      if (response.destroyed) return;
      if (!streaming) {
        response.writeHead(200, { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        streaming = true;
      }
      event({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: progress.progress, ...(progress.total !== undefined ? { total: progress.total } : {}), ...(progress.message !== undefined ? { message: progress.message } : {}) } });
    },
    end(answer: unknown) {
      if (answer !== undefined) event(answer);
      response.end();
    },
  };
}

const rpcError = (id: JsonRpcMessage['id'], code: number, message: string) => ({ jsonrpc: '2.0', id: id ?? null, error: { code, message } });

/**
 * The gateway's MCP endpoint (streamable HTTP): `POST` carries JSON-RPC messages and is answered
 * with JSON (the transport lets a server answer a request with JSON rather than an event stream),
 * `GET` is 405 (no server-initiated stream), `DELETE` ends the session. Sessions live in the shared
 * state, so any instance serves any request of a session.
 */
export class McpEndpoint {
  /** This instance's tool calls in flight, by `<session>:<request id>`, to stop when the client cancels them. */
  private readonly inFlight = new Map<string, AbortController>();

  constructor(private readonly options: McpEndpointOptions) {}

  /** This instance's open notification streams (`GET /mcp`), with the key each belongs to. */
  private readonly streams = new Set<{ keyId: string; teamId?: string; response: ServerResponse }>();

  /**
   * Tells the clients listening on this instance that lists may have changed: every stream on a
   * server change (no `affected`), the key's streams on a change of its grant, the team's keys'
   * streams on a change of the team's.
   */
  listsChanged(affected?: { readonly keyId: string } | { readonly teamId: string }): void {
    for (const stream of this.streams) {
      if (affected !== undefined && ('keyId' in affected ? stream.keyId !== affected.keyId : stream.teamId !== affected.teamId)) continue;
      for (const method of ['notifications/tools/list_changed', 'notifications/resources/list_changed', 'notifications/prompts/list_changed']) {
        stream.response.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method })}\n\n`);
      }
    }
  }

  /** Ends every open stream (the gateway is closing). */
  closeStreams(): void {
    for (const stream of this.streams) stream.response.end();
    this.streams.clear();
  }

  /** `GET` with a session: the session's notification stream (list changes), open until the client leaves. */
  private async listen(response: ServerResponse, caller: McpCaller, sessionId: string | undefined, server: string | undefined, base: Omit<McpRequestRecord, 'finishedAt' | 'method' | 'status' | 'secrets'>, key: string): Promise<void> {
    const session = sessionId === undefined ? undefined : await this.options.sessions.find(sessionId, caller.keyId);
    if (session === undefined || session.server !== server) {
      send(response, sessionId === undefined ? 400 : 404, rpcError(null, sessionId === undefined ? RPC.InvalidRequest : RPC.ConnectionClosed, sessionId === undefined ? 'Bad Request: the Mcp-Session-Id header is required.' : 'Session not found'), { 'x-gateway-trace-id': base.traceId });
      this.options.record({ ...base, finishedAt: Date.now(), caller, method: 'stream', status: sessionId === undefined ? 400 : 404, errorCode: String(sessionId === undefined ? RPC.InvalidRequest : RPC.ConnectionClosed), secrets: [key] });
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-gateway-trace-id': base.traceId });
    response.flushHeaders();
    const stream = { keyId: caller.keyId, ...(caller.teamId !== undefined ? { teamId: caller.teamId } : {}), response };
    this.streams.add(stream);
    response.once('close', () => this.streams.delete(stream));
    this.options.record({ ...base, finishedAt: Date.now(), caller, sessionId: session.id, method: 'stream', status: 200, secrets: [key] });
  }

  /** Stops a tool call in flight on this instance (a client's `notifications/cancelled`, relayed by any instance). */
  cancel(id: string): void {
    this.inFlight.get(id)?.abort();
  }

  /** Serves one HTTP request to `/mcp` (`server` undefined) or `/mcp/<server>`. */
  async serve(request: IncomingMessage, response: ServerResponse, server: string | undefined): Promise<void> {
    const traceId = timeOrderedId();
    const startedAt = Date.now();
    const base = { traceId, startedAt, httpMethod: request.method ?? 'GET', path: request.url?.split('?')[0] ?? '/mcp' };
    const refuse = (error: GatewayError, method: string, caller?: McpCaller, extra: Record<string, string> = {}) => {
      send(response, error.status, error.toJSON(), { ...error.headers, 'x-gateway-trace-id': traceId, ...extra });
      this.options.record({ ...base, finishedAt: Date.now(), method, status: error.status, errorCode: error.body.code ?? error.body.type, errorMessage: error.message, secrets: [], ...(caller ? { caller } : {}) });
    };
    try {
      const key = keyOf(request);
      if (key === undefined) return refuse(errors.authentication('Send a virtual key as the Bearer token or in x-gateway-api-key.', { code: 'missing_api_key' }), 'auth', undefined, { 'www-authenticate': WWW_AUTHENTICATE });
      const caller = await this.options.authenticate(key);
      if (caller === undefined) {
        const wrong = errors.authentication('The key is not a live virtual key.', { code: 'invalid_api_key' });
        const answer = this.options.failedAuth?.(request, wrong) ?? wrong;
        return refuse(answer, 'auth', undefined, answer.status === 401 ? { 'www-authenticate': WWW_AUTHENTICATE } : {});
      }
      if (caller === 'account') return refuse(notGranted(), 'auth');
      const sessionId = request.headers['mcp-session-id'];
      if (request.method === 'GET') return await this.listen(response, caller, typeof sessionId === 'string' ? sessionId : undefined, server, base, key);
      if (request.method === 'DELETE') return await this.end(response, caller, typeof sessionId === 'string' ? sessionId : undefined, server, base, key);
      if (request.method !== 'POST') return refuse(errors.methodNotAllowed(`${request.method} is not an MCP method here.`, { code: 'method_not_allowed' }), request.method ?? 'unknown', caller, { allow: 'GET, POST, DELETE' });
      const text = await readBody(request, this.options.bodyLimitBytes);
      const acceptsStream = (request.headers.accept ?? '').includes('text/event-stream');
      await this.post(response, { caller, key, text, server, sessionId: typeof sessionId === 'string' ? sessionId : undefined, base, refuse, acceptsStream });
    } catch (error) {
      const gatewayError = toGatewayError(error);
      if (!response.headersSent) refuse(gatewayError, 'error');
    }
  }

  private async end(response: ServerResponse, caller: McpCaller, sessionId: string | undefined, server: string | undefined, base: Omit<McpRequestRecord, 'finishedAt' | 'method' | 'status' | 'secrets'>, key: string): Promise<void> {
    const found = sessionId === undefined ? undefined : await this.options.sessions.find(sessionId, caller.keyId);
    const session = found?.server === server ? found : undefined;
    if (session === undefined) send(response, 404, rpcError(null, RPC.ConnectionClosed, 'Session not found'), { 'x-gateway-trace-id': base.traceId });
    else {
      await this.options.sessions.end(session.id);
      send(response, 200, undefined, { 'x-gateway-trace-id': base.traceId });
    }
    this.options.record({ ...base, finishedAt: Date.now(), caller, method: 'session/delete', status: session ? 200 : 404, ...(session ? { sessionId: session.id } : { errorCode: String(RPC.ConnectionClosed) }), secrets: [key] });
  }

  private async post(
    response: ServerResponse,
    input: {
      caller: McpCaller;
      key: string;
      text: string;
      server: string | undefined;
      sessionId: string | undefined;
      base: Omit<McpRequestRecord, 'finishedAt' | 'method' | 'status' | 'secrets'>;
      refuse: (error: GatewayError, method: string, caller?: McpCaller) => void;
      /** The client takes an event stream: a tool call asking for progress is answered as one once progress arrives. */
      acceptsStream: boolean;
    },
  ): Promise<void> {
    const { caller, key, base, server } = input;
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.text);
    } catch {
      send(response, 400, rpcError(null, RPC.ParseError, 'Parse error: the body is not JSON.'), { 'x-gateway-trace-id': base.traceId });
      this.options.record({ ...base, finishedAt: Date.now(), caller, method: 'parse', status: 400, errorCode: String(RPC.ParseError), secrets: [key] });
      return;
    }
    const messages = (Array.isArray(parsed) ? parsed : [parsed]) as JsonRpcMessage[];
    const initialize = messages.find((message) => message?.method === 'initialize');
    let session: McpSession | undefined;
    const headers: Record<string, string> = { 'x-gateway-trace-id': base.traceId };
    if (initialize !== undefined) {
      if (caller.principal === undefined) return input.refuse(notGranted(), 'initialize', caller);
      if (server !== undefined && !(await this.serverVisible(caller.principal, server))) return input.refuse(errors.notFound(`No MCP server "${server.slice(0, 100)}".`, { code: 'mcp_server_not_found' }), 'initialize', caller);
      const params = (initialize.params ?? {}) as { protocolVersion?: unknown; clientInfo?: { name?: unknown } };
      const clientName = typeof params.clientInfo?.name === 'string' ? params.clientInfo.name.slice(0, 200) : undefined;
      session = await this.options.sessions.open({ keyId: caller.keyId, ...(server !== undefined ? { server } : {}), protocolVersion: await negotiatedVersion(params.protocolVersion), ...(clientName !== undefined ? { clientName } : {}) });
      headers['mcp-session-id'] = session.id;
    } else {
      session = input.sessionId === undefined ? undefined : await this.options.sessions.find(input.sessionId, caller.keyId);
      if (input.sessionId === undefined) {
        send(response, 400, rpcError(null, RPC.InvalidRequest, 'Bad Request: the Mcp-Session-Id header is required (initialize first).'), headers);
        this.options.record({ ...base, finishedAt: Date.now(), caller, method: String(messages[0]?.method ?? 'unknown'), status: 400, errorCode: String(RPC.InvalidRequest), secrets: [key] });
        return;
      }
      if (session === undefined || session.server !== server) {
        send(response, 404, rpcError(null, RPC.ConnectionClosed, 'Session not found'), headers);
        this.options.record({ ...base, finishedAt: Date.now(), caller, method: String(messages[0]?.method ?? 'unknown'), status: 404, errorCode: String(RPC.ConnectionClosed), secrets: [key] });
        return;
      }
    }
    const scope: McpScope = { principal: caller.principal ?? { grants: [] }, ...(server !== undefined ? { server } : {}) };
    // A client that goes away before its answer stops the tool calls it was waiting for.
    const controllers = new Set<AbortController>();
    response.once('close', () => {
      if (!response.writableFinished) for (const controller of controllers) controller.abort();
    });
    const progress = input.acceptsStream && messages.length === 1 ? progressRelay(messages[0], response, headers) : undefined;
    const answers = (await Promise.all(messages.map((message) => this.handle(message, { scope, session: session!, caller, key, base, controllers, ...(progress ? { onProgress: progress.relay } : {}) })))).filter((answer) => answer !== undefined);
    if (progress?.streaming()) progress.end(answers[0]);
    else if (answers.length === 0) send(response, 202, undefined, headers);
    else send(response, 200, Array.isArray(parsed) ? answers : answers[0], headers);
  }

  /** One JSON-RPC message: a request's answer, or undefined for a notification or a response. */
  private async handle(
    message: JsonRpcMessage,
    context: {
      scope: McpScope;
      session: McpSession;
      caller: McpCaller;
      key: string;
      base: Omit<McpRequestRecord, 'finishedAt' | 'method' | 'status' | 'secrets'>;
      controllers: Set<AbortController>;
      onProgress?: (progress: ProgressUpdate) => void;
    },
  ): Promise<unknown> {
    if (typeof message !== 'object' || message === null || message.jsonrpc !== '2.0') return rpcError(null, RPC.InvalidRequest, 'Invalid Request: expected a JSON-RPC 2.0 message.');
    const { scope, session, caller, key, base } = context;
    if (message.method === 'notifications/cancelled') {
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') await this.options.publishCancel(`${session.id}:${JSON.stringify(requestId)}`);
      return undefined;
    }
    if (message.id === undefined || typeof message.method !== 'string') return undefined;
    const method = message.method;
    const params = (typeof message.params === 'object' && message.params !== null ? message.params : {}) as Record<string, unknown>;
    const startedAt = Date.now();
    const recorded = { ...base, startedAt, caller, sessionId: session.id, method, secrets: [key] };
    const guardrails: McpGuardrailRecord[] = [];
    const flight = `${session.id}:${JSON.stringify(message.id)}`;
    const controller = new AbortController();
    context.controllers.add(controller);
    if (method === 'tools/call') this.inFlight.set(flight, controller);
    try {
      const outcome = await this.method(method, params, scope, session, {
        guardFor: (server) => ({ ...this.options.toolGuard(caller, server), records: guardrails }),
        admit: (server, tool) => this.options.admitToolCall(caller, server, tool),
        signal: controller.signal,
        ...(context.onProgress ? { onProgress: context.onProgress } : {}),
      });
      this.options.record({ ...recorded, finishedAt: Date.now(), status: 200, ...(outcome.server ? { server: outcome.server } : {}), ...(outcome.tool ? { tool: outcome.tool } : {}), ...(outcome.costUsd ? { costUsd: outcome.costUsd } : {}), params: message.params, result: outcome.result, guardrails });
      return { jsonrpc: '2.0', id: message.id, result: outcome.result };
    } catch (error) {
      const rpc = error instanceof JsonRpcError ? error : new JsonRpcError(RPC.InternalError, 'Internal error.');
      const reached = outcomeOf(error);
      this.options.record({ ...recorded, ...reached, finishedAt: Date.now(), status: 200, errorCode: String(rpc.code), errorMessage: rpc.message, params: message.params, guardrails });
      return rpcError(message.id, rpc.code, rpc.message);
    } finally {
      if (this.inFlight.get(flight) === controller) this.inFlight.delete(flight);
    }
  }

  private async method(
    method: string,
    params: Record<string, unknown>,
    scope: McpScope,
    session: McpSession,
    call: {
      guardFor: (server: UpstreamServer) => ToolGuard;
      admit: (server: UpstreamServer, tool: string) => Promise<() => Promise<void>>;
      signal: AbortSignal;
      onProgress?: (progress: ProgressUpdate) => void;
    },
  ): Promise<MethodOutcome> {
    switch (method) {
      case 'initialize':
        return { result: initializeResult(session.protocolVersion, session.server), ...(session.server !== undefined ? { server: session.server } : {}) };
      case 'ping':
        return { result: {} };
      case 'tools/list':
        return listTools(this.options.catalogue, scope);
      case 'tools/call':
        return callTool(this.options.catalogue, scope, params, call.guardFor, call.admit, call.signal, call.onProgress);
      case 'resources/list':
        return listResources(this.options.catalogue, scope);
      case 'resources/templates/list':
        return listResourceTemplates(this.options.catalogue, scope);
      case 'resources/read':
        return readResource(this.options.catalogue, scope, params);
      case 'prompts/list':
        return listPrompts(this.options.catalogue, scope);
      case 'prompts/get':
        return getPrompt(this.options.catalogue, scope, params);
      case 'completion/complete':
        return complete(this.options.catalogue, scope, params);
      default:
        throw new JsonRpcError(RPC.MethodNotFound, `Method not found: ${method.slice(0, 100)}`);
    }
  }

  /** `/mcp/<server>` opens only on a server that exists and that the caller may reach (the two are not told apart). */
  private async serverVisible(principal: McpPrincipal, server: string): Promise<boolean> {
    return (await this.options.catalogue.servers()).has(server) && mayReachServer(principal, server);
  }
}

const notGranted = () => errors.permission('This key has no MCP grant; give it one with PATCH /admin/virtual-keys/{id} { "mcp": { "servers": { … } } }.', { code: 'mcp_not_granted' });
