import type { McpCatalogue, UpstreamServer } from './catalogue.js';
import { mayReachServer, mayUseTool, type McpPrincipal } from './grants.js';
import type { McpTool } from './server-store.js';
import { loadSdk, RPC } from './sdk.js';
import { denialResult, judgeArguments, judgeResult, type ToolGuard } from './guardrails.js';
import type { Restorer } from '../spec/guardrail.js';
import { type ProgressUpdate, UpstreamMcpError } from './upstream.js';

/** On `/mcp`, a tool (or prompt) is named `<server>__<name>`; server names never hold `__`, so the first one splits. */
export const NAME_SEPARATOR = '__';

/** A JSON-RPC error to answer with. */
export class JsonRpcError extends Error {
  override readonly name = 'JsonRpcError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Who asks and where: the caller's grants (none: nothing usable), and `/mcp/<server>`'s server. */
export interface McpScope {
  readonly principal: McpPrincipal;
  readonly server?: string;
}

/** What a handled request tells the log: the server and tool it reached. */
export interface MethodOutcome {
  readonly result: unknown;
  readonly server?: string;
  readonly tool?: string;
  /** What the call was charged (the server's `cost_per_call_usd`, when it reached the server). */
  readonly costUsd?: number;
}

/** The protocol version the gateway answers an `initialize` with: the client's when the SDK supports it, else the latest. */
export async function negotiatedVersion(requested: unknown): Promise<string> {
  const { SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION } = await loadSdk();
  return typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

/** `initialize`'s result. */
export function initializeResult(protocolVersion: string, server: string | undefined): Record<string, unknown> {
  return {
    protocolVersion,
    capabilities: { tools: { listChanged: true }, resources: { subscribe: false, listChanged: true }, prompts: { listChanged: true }, completions: {} },
    serverInfo: { name: server === undefined ? 'llm-gateway' : `llm-gateway/${server}`, version: '0.1.0' },
    instructions: server === undefined ? `Tools of every MCP server this key is granted, named <server>${NAME_SEPARATOR}<tool>.` : `Tools of the MCP server "${server}".`,
  };
}

/** The tools of one server the scope may use, as listed: every one passes {@link mayUseTool}. */
function usableTools(scope: McpScope, server: UpstreamServer): McpTool[] {
  if (!mayReachServer(scope.principal, server.name)) return [];
  return server.tools.filter((tool) => mayUseTool(scope.principal, server, tool.name));
}

/** The servers a scope sees: one on `/mcp/<server>`, all on `/mcp`. */
function serversOf(servers: ReadonlyMap<string, UpstreamServer>, scope: McpScope): UpstreamServer[] {
  if (scope.server === undefined) return [...servers.values()];
  const server = servers.get(scope.server);
  return server ? [server] : [];
}

/** `tools/list`: every tool the scope may call, prefixed on `/mcp`. */
export async function listTools(catalogue: McpCatalogue, scope: McpScope): Promise<MethodOutcome> {
  const tools: McpTool[] = [];
  for (const server of serversOf(await catalogue.servers(), scope)) {
    for (const tool of usableTools(scope, server)) tools.push(scope.server === undefined ? { ...tool, name: `${server.name}${NAME_SEPARATOR}${tool.name}` } : tool);
  }
  return { result: { tools }, ...(scope.server !== undefined ? { server: scope.server } : {}) };
}

/** The server and tool a `tools/call` name means in the scope, or undefined when it names none the scope may call. */
function resolveTool(servers: ReadonlyMap<string, UpstreamServer>, scope: McpScope, name: string): { server: UpstreamServer; tool: string } | undefined {
  let serverName = scope.server;
  let tool = name;
  if (serverName === undefined) {
    const at = name.indexOf(NAME_SEPARATOR);
    if (at <= 0) return undefined;
    serverName = name.slice(0, at);
    tool = name.slice(at + NAME_SEPARATOR.length);
  }
  const server = servers.get(serverName);
  if (server === undefined || !mayReachServer(scope.principal, server.name)) return undefined;
  if (!server.tools.some((known) => known.name === tool) || !mayUseTool(scope.principal, server, tool)) return undefined;
  return { server, tool };
}

/**
 * `tools/call`: the upstream's result as it gave it (every content type, `structuredContent`,
 * `isError`); a tool the scope may not call gets exactly the answer of a tool that does not exist
 * (-32602 `Unknown tool`); an upstream time-out or failure is a JSON-RPC error naming the server; a
 * result over the server's `max_result_bytes` is an error, never a part of the result. The caller's
 * and the server's guardrail policies judge the arguments before they leave and the result before
 * it is returned; a denial is a result with `isError: true` and the denial's message.
 */
export async function callTool(
  catalogue: McpCatalogue,
  scope: McpScope,
  params: Record<string, unknown>,
  guardFor?: (server: UpstreamServer) => ToolGuard,
  admit?: (server: UpstreamServer, tool: string) => Promise<() => Promise<void>>,
  signal?: AbortSignal,
  onProgress?: (progress: ProgressUpdate) => void,
): Promise<MethodOutcome> {
  const name = params.name;
  if (typeof name !== 'string') throw new JsonRpcError(RPC.InvalidParams, 'tools/call needs params.name, a string.');
  const args = params.arguments;
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) throw new JsonRpcError(RPC.InvalidParams, 'params.arguments must be an object.');
  const resolved = resolveTool(await catalogue.servers(), scope, name);
  if (resolved === undefined) throw new JsonRpcError(RPC.InvalidParams, `Unknown tool: ${name.slice(0, 200)}`);
  const { server, tool } = resolved;
  const outcome = { server: server.name, tool };
  const guard = guardFor?.(server);
  let judgedArgs = args as Record<string, unknown> | undefined;
  let restorer: Restorer | undefined;
  if (guard) {
    const judged = await judgeArguments(guard, judgedArgs);
    if ('denied' in judged) return { result: denialResult(judged.denied), ...outcome };
    judgedArgs = judged.value;
    restorer = judged.restorer;
  }
  let settle: (() => Promise<void>) | undefined;
  try {
    settle = await admit?.(server, tool);
  } catch (error) {
    throw Object.assign(error as Error, { outcome });
  }
  let result: Record<string, unknown>;
  const charged = { ...outcome, ...(server.costPerCallUsd ? { costUsd: server.costPerCallUsd } : {}) };
  try {
    result = await server.connection.callTool(tool, judgedArgs, signal, onProgress);
  } catch (error) {
    if (error instanceof UpstreamMcpError) throw Object.assign(new JsonRpcError(error.code, error.message), { outcome: charged });
    throw error;
  } finally {
    await settle?.();
  }
  const size = Buffer.byteLength(JSON.stringify(result));
  if (size > server.maxResultBytes) {
    throw Object.assign(new JsonRpcError(RPC.InternalError, `The result of MCP server "${server.name}" (${size} bytes) is over its max_result_bytes (${server.maxResultBytes}); nothing of it is returned.`), { outcome: charged });
  }
  if (guard) {
    const judged = await judgeResult(guard, result, restorer);
    if ('denied' in judged) return { result: denialResult(judged.denied), ...charged };
    result = judged.value;
  }
  return { result, ...charged };
}

/** The server and tool a failed request had reached (for its log entry). */
export function outcomeOf(error: unknown): { server?: string; tool?: string; costUsd?: number } {
  return (error as { outcome?: { server?: string; tool?: string; costUsd?: number } }).outcome ?? {};
}
