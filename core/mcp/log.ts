import { type LogBodies, type LogEntry, type LoggedVerdict, type LogSink, maskFlagged } from '../logs/entry.js';
import { timeOrderedId } from '../ids.js';
import { redactSecrets } from '../redact.js';
import type { McpRequestRecord } from './endpoint.js';

/**
 * One MCP request's log entry: `operation: "mcp"`, `mcp: { server, method, tool }` (tool names are
 * logged even when bodies are not), a JSON-RPC error inside an HTTP 200 with its code as the
 * error's `code`. The arguments and the result travel as bodies, which the log writer redacts and
 * caps like every body.
 */
export function mcpLogEntry(record: McpRequestRecord): LogEntry {
  const durationMs = Math.max(0, record.finishedAt - record.startedAt);
  const failed = record.errorCode !== undefined;
  const caller = record.caller;
  return {
    id: timeOrderedId(),
    time: new Date(record.startedAt).toISOString(),
    traceId: record.traceId,
    method: record.httpMethod,
    path: record.path,
    operation: 'mcp',
    mcp: {
      method: record.method,
      ...(record.server !== undefined ? { server: record.server } : {}),
      ...(record.tool !== undefined ? { tool: record.tool } : {}),
      ...(record.sessionId !== undefined ? { session: record.sessionId.slice(0, 8) } : {}),
    },
    status: record.status,
    outcome: failed ? 'error' : 'ok',
    ...(failed ? { error: { type: record.status >= 400 ? 'http_error' : 'jsonrpc_error', code: record.errorCode!, message: redactSecrets(record.errorMessage ?? '', record.secrets).slice(0, 500) } } : {}),
    ...(caller ? { caller: `virtual-key:${caller.keyId}`, callerType: 'virtual-key' as const, keyId: caller.keyId, keyName: caller.keyName } : {}),
    streaming: false,
    ...(record.costUsd !== undefined ? { costUsd: record.costUsd } : {}),
    durationMs,
    gatewayMs: durationMs,
    // Mirrored into metadata, which the durable log stores and filters on (`metadata.mcp.tool=…`).
    metadata: {
      'mcp.method': record.method,
      ...(record.server !== undefined ? { 'mcp.server': record.server } : {}),
      ...(record.tool !== undefined ? { 'mcp.tool': record.tool } : {}),
    },
    guardrails: loggedVerdicts(record),
    ...(record.guardrails?.[0] !== undefined ? { guardrailPolicy: record.guardrails[0].policy } : {}),
  };
}

/** What guardrails flagged in the call's arguments or result, to mask in what is logged. */
function flaggedOf(record: McpRequestRecord): string[] | undefined {
  const flagged = (record.guardrails ?? []).flatMap((verdict) => verdict.flagged ?? []);
  return flagged.length > 0 ? flagged : undefined;
}

/** The verdicts as logged: a denial's reason (secrets and flagged values masked), a transform's counts, never values. */
function loggedVerdicts(record: McpRequestRecord): LoggedVerdict[] {
  const flagged = flaggedOf(record);
  return (record.guardrails ?? []).map((verdict) => ({
    policy: verdict.policy,
    guardrail: verdict.guardrail,
    side: verdict.side,
    action: verdict.verdict.action,
    ms: Math.round(verdict.ms * 1000) / 1000,
    ...(verdict.verdict.action === 'deny' ? { reason: maskFlagged(redactSecrets(verdict.verdict.reason, record.secrets), flagged) } : {}),
    ...(verdict.verdict.action === 'transform' ? { changes: { ...verdict.verdict.changes } } : {}),
    ...(verdict.failure ? { failure: verdict.failure } : {}),
  }));
}

/** The request's params and result as bodies (absent when the key or the configuration keeps bodies out of the log). */
export function mcpLogBodies(record: McpRequestRecord, bodiesOn: boolean): LogBodies | undefined {
  if (!bodiesOn || record.caller?.logBodies === false) return undefined;
  if (record.params === undefined && record.result === undefined) return undefined;
  return {
    ...(record.params !== undefined ? { request: { json: record.params } } : {}),
    ...(record.result !== undefined ? { response: { json: record.result } } : {}),
    secrets: record.secrets,
    ...(flaggedOf(record) ? { flagged: flaggedOf(record)! } : {}),
  };
}

/** Hands an MCP request's entry to every sink (pino, metrics, the request log). */
export function recordMcpRequest(sinks: readonly LogSink[], bodiesOn: (record: McpRequestRecord) => boolean): (record: McpRequestRecord) => void {
  return (record) => {
    const entry = mcpLogEntry(record);
    const bodies = mcpLogBodies(record, bodiesOn(record));
    for (const sink of sinks) sink.write(entry, bodies);
  };
}
