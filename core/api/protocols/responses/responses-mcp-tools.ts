import { errors } from '../../../errors.js';
import type { McpModelTools } from '../../../mcp/model-tools.js';
import type { McpTool } from '../../../mcp/server-store.js';
import { isRecord } from '../../../spec/is-record.js';
import type { ResponseItem, ResponsesRequest, ResponsesTool } from '../../../spec/responses.js';
import { invalid } from '../../validate.js';
import { newId } from './responses-objects.js';

/** One MCP tool offered to the model as a function tool. */
export interface OfferedTool {
  readonly server: string;
  readonly tool: McpTool;
  /** Whether a call waits for the client's `mcp_approval_response` (`require_approval`). */
  readonly approval: boolean;
}

/** The request's `mcp` tools as the model gets them. */
export interface ToolPlan {
  /** The offered tools by the function name the model calls them with. */
  readonly offered: ReadonlyMap<string, OfferedTool>;
  /** The function tools standing for them, then the request's other tools. */
  readonly modelTools: ResponsesTool[];
  /** New `mcp_list_tools` items (none for a server whose list the conversation already holds). */
  readonly lists: ResponseItem[];
  /** The function name of a server's tool (also for a tool no longer offered, named in the conversation). */
  functionName(server: string, tool: string): string;
}

/** The `mcp` tools the gateway serves: those naming a registered server by `server_label` (no `server_url`, connector or tunnel, which only OpenAI can reach). */
export function servedMcpTools(request: Pick<ResponsesRequest, 'tools'>): ResponsesTool[] {
  return (request.tools ?? []).filter((tool) => tool.type === 'mcp' && tool.server_url == null && tool.connector_id == null && tool.tunnel_id == null);
}

const readOnly = (tool: McpTool): boolean => isRecord(tool.annotations) && tool.annotations.readOnlyHint === true;

/** A tool filter (`{ tool_names, read_only }`) or a list of names, as OpenAI defines `allowed_tools`. */
function allowedBy(allowed: unknown, tool: McpTool): boolean {
  if (allowed === undefined || allowed === null) return true;
  if (Array.isArray(allowed)) return allowed.includes(tool.name);
  if (!isRecord(allowed)) return true;
  if (Array.isArray(allowed.tool_names) && !allowed.tool_names.includes(tool.name)) return false;
  return allowed.read_only !== true || readOnly(tool);
}

function filterMatches(filter: unknown, tool: McpTool): boolean {
  if (!isRecord(filter)) return false;
  return (Array.isArray(filter.tool_names) && filter.tool_names.includes(tool.name)) || (filter.read_only === true && readOnly(tool));
}

/** `require_approval`: `never`, `always` (OpenAI's default), or `{ always, never }` filters (a tool in neither needs approval). */
function needsApproval(setting: unknown, tool: McpTool): boolean {
  if (setting === 'never') return false;
  if (!isRecord(setting)) return true;
  if (filterMatches(setting.never, tool)) return false;
  return true;
}

function validateMcpTool(tool: ResponsesTool, at: string): string {
  if (typeof tool.server_label !== 'string' || tool.server_label === '') throw invalid('is required: the name of an MCP server registered with the gateway.', { param: `${at}.server_label` });
  const approval = tool.require_approval;
  if (approval !== undefined && approval !== null && approval !== 'always' && approval !== 'never' && !isRecord(approval)) throw invalid("must be 'always', 'never' or an object of filters.", { param: `${at}.require_approval` });
  const allowed = tool.allowed_tools;
  if (allowed !== undefined && allowed !== null && !Array.isArray(allowed) && !isRecord(allowed)) throw invalid('must be a list of tool names or a filter object.', { param: `${at}.allowed_tools` });
  return tool.server_label;
}

/** A function name the model accepts (`[A-Za-z0-9_-]`, at most 64 characters) for `<server>__<tool>`. */
function baseName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/**
 * Lists each served `mcp` tool's server for the key (the grant decides, as on `/mcp/<server>`), keeps
 * the tools its `allowed_tools` allows too, and names each for the model. A server the key cannot
 * reach answers exactly like one that does not exist (404 `mcp_server_not_found`).
 */
export async function planTools(request: ResponsesRequest, conversation: readonly ResponseItem[], mcp: McpModelTools, keyId: string, traceId: string): Promise<ToolPlan> {
  const offered = new Map<string, OfferedTool>();
  const names = new Map<string, string>();
  const functionName = (server: string, tool: string): string => {
    const known = names.get(`${server}\u0000${tool}`);
    if (known !== undefined) return known;
    let name = baseName(server, tool);
    for (let suffix = 2; [...names.values()].includes(name); suffix++) name = `${baseName(server, tool).slice(0, 60)}_${suffix}`;
    names.set(`${server}\u0000${tool}`, name);
    return name;
  };
  const modelTools: ResponsesTool[] = [];
  const lists: ResponseItem[] = [];
  const listed = new Set(conversation.filter((item) => item.type === 'mcp_list_tools').map((item) => item.server_label));
  const tools = request.tools ?? [];
  for (const [index, tool] of tools.entries()) {
    if (servedMcpTools({ tools: [tool] }).length === 0) continue;
    const server = validateMcpTool(tool, `tools[${index}]`);
    const available = await mcp.list(keyId, server, traceId);
    if (available === undefined) throw errors.notFound(`No MCP server "${server.slice(0, 100)}" for this key.`, { param: `tools[${index}].server_label`, code: 'mcp_server_not_found' });
    const usable = available.filter((entry) => allowedBy(tool.allowed_tools, entry));
    if (!listed.has(server)) {
      lists.push({ id: newId('mcpl'), type: 'mcp_list_tools', server_label: server, tools: usable.map((entry) => ({ name: entry.name, description: entry.description ?? null, input_schema: entry.inputSchema, annotations: entry.annotations ?? null })) });
      listed.add(server);
    }
    for (const entry of usable) {
      const name = functionName(server, entry.name);
      offered.set(name, { server, tool: entry, approval: needsApproval(tool.require_approval, entry) });
      modelTools.push({ type: 'function', name, description: entry.description ?? `${entry.name} (MCP server ${server})`, parameters: { ...entry.inputSchema } });
    }
  }
  // The request's other tools (functions, built-in tools, OpenAI's own `mcp` tools with a `server_url`) go on as they are.
  const served = new Set(servedMcpTools(request));
  modelTools.push(...tools.filter((tool) => !served.has(tool)));
  return { offered, modelTools, lists, functionName };
}

/** The text of an MCP tool result for the model: its text parts, other parts as JSON, or its structured content. */
export function resultText(result: Record<string, unknown>): string {
  const parts = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const texts = parts.map((part) => (isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : JSON.stringify(part)));
  if (texts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return texts.join('\n');
}

/** A function call and its output, as a finished MCP call (or a refused one) is shown to the model. */
function callPair(callId: string, name: string, args: unknown, output: string): ResponseItem[] {
  return [
    { type: 'function_call', call_id: callId, name, arguments: typeof args === 'string' ? args : '{}' },
    { type: 'function_call_output', call_id: callId, output },
  ];
}

/** What an `mcp_call` item tells the model: its output, or its error. */
export function callOutput(item: ResponseItem): string {
  if (typeof item.output === 'string') return item.output;
  const error = item.error;
  if (isRecord(error)) return `Error: ${typeof error.message === 'string' ? error.message : JSON.stringify(error.content ?? error)}`;
  return typeof error === 'string' ? `Error: ${error}` : '';
}

/** The answer the model gets for a call the client did not approve. */
export const NOT_APPROVED = 'The user did not approve this tool call.';

/**
 * A conversation with MCP items (stored history, the request's input, the loop's output) as items
 * every provider reads: each `mcp_call` becomes a function call and its output, a refused approval
 * request a function call answered with {@link NOT_APPROVED}; tool lists, approval responses and
 * requests still pending (or answered by an `mcp_call`) are left out.
 */
export function modelItems(items: readonly ResponseItem[], functionName: (server: string, tool: string) => string): ResponseItem[] {
  const answeredByCall = new Set(items.filter((item) => item.type === 'mcp_call' && typeof item.approval_request_id === 'string').map((item) => item.approval_request_id));
  const refused = new Set(items.filter((item) => item.type === 'mcp_approval_response' && item.approve === false).map((item) => item.approval_request_id));
  const out: ResponseItem[] = [];
  for (const item of items) {
    if (item.type === 'mcp_call') out.push(...callPair(String(item.approval_request_id ?? item.id), functionName(String(item.server_label), String(item.name)), item.arguments, callOutput(item)));
    else if (item.type === 'mcp_approval_request') {
      if (!answeredByCall.has(item.id) && refused.has(item.id)) out.push(...callPair(String(item.id), functionName(String(item.server_label), String(item.name)), item.arguments, NOT_APPROVED));
    } else if (item.type !== 'mcp_list_tools' && item.type !== 'mcp_approval_response') out.push(item);
  }
  return out;
}
