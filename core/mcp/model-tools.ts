import type { McpCatalogue, UpstreamServer } from './catalogue.js';
import type { McpCaller, McpRequestRecord } from './endpoint.js';
import type { McpGuardrailRecord, ToolGuard } from './guardrails.js';
import { mayReachServer } from './grants.js';
import { callTool, JsonRpcError, listTools, outcomeOf } from './methods.js';
import { RPC } from './sdk.js';
import type { McpTool } from './server-store.js';

/** A tool call's outcome as a model call sees it: the MCP result, or the JSON-RPC error it got. */
export type ModelToolOutcome = { readonly result: Record<string, unknown> } | { readonly error: { readonly code: number; readonly message: string } };

/**
 * What the Responses API's `mcp` tool asks of the MCP gateway (docs/mcp.md, "The Responses `mcp`
 * tool"): a key's tools of one server and a key's tool call, decided by the same grant function as
 * `/mcp/<server>` (`mayUseTool`), judged by the same guardrails, limited, charged and logged alike.
 */
export interface McpModelTools {
  /** The tools of `server` the key may use (listed as `/mcp/<server>` lists them); undefined when the key has no such server (unknown, or not reachable under its grant). */
  list(keyId: string, server: string, traceId: string): Promise<McpTool[] | undefined>;
  /** Calls `tool` of `server` for the key; a tool it may not use answers like an unknown tool (-32602). */
  call(keyId: string, server: string, tool: string, args: Record<string, unknown>, traceId: string, signal?: AbortSignal): Promise<ModelToolOutcome>;
}

export interface ModelToolsOptions {
  readonly catalogue: McpCatalogue;
  /** A key's MCP caller (its grants, policy, limits), or undefined for a key that does not exist. */
  readonly callerOf: (keyId: string) => Promise<McpCaller | undefined>;
  readonly toolGuard: (caller: McpCaller, server: UpstreamServer) => ToolGuard;
  readonly admitToolCall: (caller: McpCaller, server: UpstreamServer, tool: string) => Promise<() => Promise<void>>;
  readonly record: (record: McpRequestRecord) => void;
}

/** The path the log entries of a model call's MCP requests name. */
const PATH = '/v1/responses';

/** The MCP side of the Responses `mcp` tool, over this instance's catalogue. */
export function modelTools(options: ModelToolsOptions): McpModelTools {
  const base = (traceId: string, caller: McpCaller | undefined, method: string) => ({ traceId, startedAt: Date.now(), httpMethod: 'POST', path: PATH, method, secrets: [] as string[], ...(caller ? { caller } : {}) });
  return {
    async list(keyId, server, traceId) {
      const caller = await options.callerOf(keyId);
      const record = base(traceId, caller, 'tools/list');
      const principal = caller?.principal;
      if (principal === undefined || !(await options.catalogue.servers()).has(server) || !mayReachServer(principal, server)) {
        options.record({ ...record, finishedAt: Date.now(), server, status: 200, errorCode: String(RPC.InvalidParams), errorMessage: 'no such MCP server for this key' });
        return undefined;
      }
      const outcome = await listTools(options.catalogue, { principal, server });
      options.record({ ...record, finishedAt: Date.now(), server, status: 200, result: outcome.result });
      return (outcome.result as { tools: McpTool[] }).tools;
    },

    async call(keyId, server, tool, args, traceId, signal) {
      const caller = await options.callerOf(keyId);
      const record = base(traceId, caller, 'tools/call');
      const params = { name: tool, arguments: args };
      const guardrails: McpGuardrailRecord[] = [];
      try {
        if (caller?.principal === undefined) throw new JsonRpcError(RPC.InvalidParams, `Unknown tool: ${tool.slice(0, 200)}`);
        const outcome = await callTool(
          options.catalogue,
          { principal: caller.principal, server },
          params,
          (upstream) => ({ ...options.toolGuard(caller, upstream), records: guardrails }),
          (upstream, name) => options.admitToolCall(caller, upstream, name),
          signal,
        );
        options.record({ ...record, finishedAt: Date.now(), status: 200, server, tool, ...(outcome.costUsd ? { costUsd: outcome.costUsd } : {}), params, result: outcome.result, guardrails });
        return { result: outcome.result as Record<string, unknown> };
      } catch (error) {
        const rpc = error instanceof JsonRpcError ? error : new JsonRpcError(RPC.InternalError, 'Internal error.');
        options.record({ ...record, ...outcomeOf(error), finishedAt: Date.now(), status: 200, server, errorCode: String(rpc.code), errorMessage: rpc.message, params, guardrails });
        return { error: { code: rpc.code, message: rpc.message } };
      }
    },
  };
}
