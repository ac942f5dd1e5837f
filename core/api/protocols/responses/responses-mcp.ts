import { PassThrough } from 'node:stream';
import { errors, toGatewayError } from '../../../errors.js';
import type { McpModelTools } from '../../../mcp/model-tools.js';
import type { GatewayContext, GatewayResponse } from '../../../pipeline/context.js';
import type { Pipeline } from '../../../pipeline/runner.js';
import type { ResponseItem, ResponseObject, ResponsesRequest, ResponseUsage } from '../../../spec/responses.js';
import { LoopEvents } from './responses-mcp-events.js';
import { modelItems, NOT_APPROVED, type OfferedTool, planTools, resultText, servedMcpTools, type ToolPlan } from './responses-mcp-tools.js';
import { runModelCall } from './responses-model-call.js';
import { clientResponse, newId, responseShell } from './responses-objects.js';

/** The most model calls one response makes (docs/mcp.md): past it, the response ends `incomplete` (`max_tool_calls`). */
export const MCP_MAX_MODEL_CALLS = 8;

/** What the `mcp` tool loop needs: the pipeline each model call runs through, and the MCP gateway. */
export interface McpLoopOptions {
  readonly pipeline: () => Pipeline;
  readonly tools: () => McpModelTools;
}

/** One request's loop: its ids, conversation so far, and where its answer is stored. */
export interface McpLoopRequest {
  readonly id: string;
  readonly createdAt: number;
  /** The stored conversation `previous_response_id` names. */
  readonly history: readonly ResponseItem[];
  /** The request's input as items (with ids). */
  readonly input: readonly ResponseItem[];
  /** Stores the finished response (unless `store: false`). */
  readonly finished: (response: ResponseObject) => Promise<void>;
}

function addUsage(total: ResponseUsage | null, usage: ResponseUsage | null | undefined): ResponseUsage | null {
  if (!usage) return total;
  if (!total) return usage;
  return {
    input_tokens: total.input_tokens + usage.input_tokens,
    input_tokens_details: { cached_tokens: (total.input_tokens_details?.cached_tokens ?? 0) + (usage.input_tokens_details?.cached_tokens ?? 0) },
    output_tokens: total.output_tokens + usage.output_tokens,
    output_tokens_details: { reasoning_tokens: (total.output_tokens_details?.reasoning_tokens ?? 0) + (usage.output_tokens_details?.reasoning_tokens ?? 0) },
    total_tokens: total.total_tokens + usage.total_tokens,
  };
}

/** The key the loop acts for: a virtual key (its MCP grant decides); any other caller holds no grant. */
function keyIdOf(context: GatewayContext): string {
  const caller = context.auth?.caller;
  if (caller?.type !== 'virtual-key') throw errors.permission('Only a virtual key with an MCP grant may use an mcp tool.', { code: 'mcp_not_granted' });
  return caller.id;
}

/** Runs one MCP call the model asked for (or the client approved): the `mcp_call` item with its output or error. */
async function callItem(tools: McpModelTools, keyId: string, context: GatewayContext, offered: { server: string; name: string }, argumentsText: string, item: ResponseItem): Promise<ResponseItem> {
  let args: unknown;
  try {
    args = argumentsText.trim() === '' ? {} : JSON.parse(argumentsText);
  } catch {
    args = undefined;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { ...item, status: 'failed', output: null, error: { type: 'mcp_protocol_error', code: -32602, message: 'The tool arguments are not a JSON object.' } };
  }
  const outcome = await tools.call(keyId, offered.server, offered.name, args as Record<string, unknown>, context.traceId, context.signal);
  if ('error' in outcome) return { ...item, status: 'failed', output: null, error: { type: 'mcp_protocol_error', ...outcome.error } };
  const output = resultText(outcome.result);
  if (outcome.result.isError === true) return { ...item, status: 'failed', output, error: { type: 'mcp_tool_execution_error', content: outcome.result.content ?? [] } };
  return { ...item, status: 'completed', output, error: null };
}

/**
 * The Responses API's `mcp` tool on every provider (docs/mcp.md, "The Responses `mcp` tool"): the
 * served servers' tools (those both the key's grant and the request's `allowed_tools` allow) are
 * given to the model as function tools; each call the model makes is run by the gateway under the
 * key's grant, its result fed back, and the model called again, at most
 * {@link MCP_MAX_MODEL_CALLS} times. Each model call is a request of its own through the pipeline
 * (logged, limited, charged); each tool call an MCP request (logged, limited, charged). A tool that
 * needs approval ends the response with an `mcp_approval_request`; a later request answering it
 * with an `mcp_approval_response` runs it (or tells the model it was refused) and continues.
 */
export async function mcpToolLoop(options: McpLoopOptions, context: GatewayContext, request: ResponsesRequest, loop: McpLoopRequest): Promise<GatewayResponse> {
  const keyId = keyIdOf(context);
  const tools = options.tools();
  const conversation = [...loop.history, ...loop.input];
  const plan = await planTools(request, conversation, tools, keyId, context.traceId);
  const shell = responseShell(request, loop.id, loop.createdAt);
  const output: ResponseItem[] = [];
  if (request.stream !== true) {
    const response = await runSteps(options, context, request, { plan, conversation, output, keyId, tools, shell });
    await loop.finished(response);
    return { status: 200, headers: {}, body: { json: clientResponse(response, request.include) } };
  }
  const stream = new PassThrough();
  const events = new LoopEvents(stream, output, (name) => typeof name === 'string' && plan.offered.has(name), request.include);
  events.opening(shell);
  void runSteps(options, context, request, { plan, conversation, output, keyId, tools, shell, events })
    .then(async (response) => {
      await loop.finished(response);
      events.end(clientResponse(response, request.include));
    })
    .catch((error: unknown) => {
      const failure = toGatewayError(error);
      events.end({ ...shell, status: 'failed', output: [...output], error: { code: failure.body.code ?? failure.body.type, message: failure.message } });
    });
  return { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, body: { stream } };
}

interface Steps {
  readonly plan: ToolPlan;
  readonly conversation: readonly ResponseItem[];
  /** The response's output, filled as the loop goes (the stream's events place model items in it themselves). */
  readonly output: ResponseItem[];
  readonly keyId: string;
  readonly tools: McpModelTools;
  readonly shell: ResponseObject;
  readonly events?: LoopEvents;
}

/** Approval responses in the request's input: the approved calls run now, before the first model call. */
async function approvedCalls(steps: Steps, context: GatewayContext): Promise<void> {
  const { conversation, output, events } = steps;
  for (const answer of conversation.filter((item) => item.type === 'mcp_approval_response' && item.approve === true)) {
    const asked = conversation.find((item) => item.type === 'mcp_approval_request' && item.id === answer.approval_request_id);
    if (asked === undefined || conversation.some((item) => item.type === 'mcp_call' && item.approval_request_id === asked.id)) continue;
    const opened: ResponseItem = { id: newId('mcp'), type: 'mcp_call', server_label: asked.server_label, name: asked.name, arguments: String(asked.arguments ?? ''), approval_request_id: asked.id, status: 'in_progress' };
    const index = events ? events.callStarted(opened) : output.push(opened) - 1;
    const done = await callItem(steps.tools, steps.keyId, context, { server: String(asked.server_label), name: String(asked.name) }, String(asked.arguments ?? ''), opened);
    if (events) events.callEnded(index, done);
    else output[index] = done;
  }
}

/** The model calls and tool calls of one response, until the model answers without an MCP call (or must wait for the client). */
async function runSteps(options: McpLoopOptions, context: GatewayContext, request: ResponsesRequest, steps: Steps): Promise<ResponseObject> {
  const { plan, output, events } = steps;
  for (const list of plan.lists) {
    if (events) events.list(list);
    else output.push(list);
  }
  await approvedCalls(steps, context);
  let usage: ResponseUsage | null = null;
  let toolCalls = 0;
  const maxToolCalls = typeof request.max_tool_calls === 'number' ? request.max_tool_calls : Number.POSITIVE_INFINITY;
  for (let step = 0; step < MCP_MAX_MODEL_CALLS; step++) {
    const body: ResponsesRequest = {
      ...request,
      input: modelItems([...steps.conversation, ...output], plan.functionName),
      tools: plan.modelTools,
      store: false,
      previous_response_id: undefined,
      include: [...new Set([...(request.include ?? []), 'reasoning.encrypted_content'])],
      max_tool_calls: undefined,
    };
    events?.step();
    const answer = await runModelCall(options.pipeline(), context, JSON.parse(JSON.stringify(body)) as ResponsesRequest, events ? (event) => events.relay(event) : undefined);
    usage = addUsage(usage, answer.usage);
    const calls: Array<{ item: ResponseItem; offered: OfferedTool }> = [];
    let waitsForClient = false;
    for (const item of answer.output) {
      const offered = item.type === 'function_call' ? plan.offered.get(String(item.name)) : undefined;
      if (offered) calls.push({ item, offered });
      else {
        if (item.type === 'function_call' || item.type === 'custom_tool_call') waitsForClient = true;
        if (!events) output.push(item);
      }
    }
    const finish = (status: ResponseObject['status'], incomplete: ResponseObject['incomplete_details']): ResponseObject => ({
      ...steps.shell,
      model: answer.model,
      status,
      incomplete_details: incomplete,
      output: [...output],
      usage,
    });
    if (calls.length === 0) return finish(answer.status, answer.incomplete_details);
    for (const { item, offered } of calls) {
      const argumentsText = String(item.arguments ?? '');
      if (offered.approval) {
        const asked: ResponseItem = { id: newId('mcpr'), type: 'mcp_approval_request', server_label: offered.server, name: offered.tool.name, arguments: argumentsText };
        if (events) events.item(asked);
        else output.push(asked);
        waitsForClient = true;
        continue;
      }
      if (toolCalls >= maxToolCalls) return finish('incomplete', { reason: 'max_tool_calls' });
      toolCalls++;
      const opened: ResponseItem = { id: newId('mcp'), type: 'mcp_call', server_label: offered.server, name: offered.tool.name, arguments: argumentsText, approval_request_id: null, status: 'in_progress' };
      const index = events ? events.callStarted(opened) : output.push(opened) - 1;
      const done = await callItem(steps.tools, steps.keyId, context, { server: offered.server, name: offered.tool.name }, argumentsText, opened);
      if (events) events.callEnded(index, done);
      else output[index] = done;
    }
    if (waitsForClient) return finish('completed', null);
  }
  return { ...steps.shell, status: 'incomplete', incomplete_details: { reason: 'max_tool_calls' }, output: [...output], usage };
}

export { NOT_APPROVED, servedMcpTools };
