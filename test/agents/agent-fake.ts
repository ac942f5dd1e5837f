import type { ServerResponse } from 'node:http';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';

/**
 * A loopback fake of OpenAI (chat completions and the Responses API, streamed or not) that plays the
 * model of a one-tool agent task, deciding from what each request carries rather than from their
 * order (agents also send side requests: titles, summaries, next-speaker checks):
 * - the conversation holds a tool result: the final answer, quoting the line the tool returned when
 *   it holds `SECRET_LINE` (so the answer proves the tool ran);
 * - the request offers the task's tool: a call of it with the task's arguments;
 * - anything else (a request without that tool): a short plain answer.
 */

export const SECRET_LINE = 'The launch code is 4242.';
export const FINAL_ANSWER = `The notes say: ${SECRET_LINE}`;
const SIDE_ANSWER = 'Reading notes';

export interface AgentTask {
  /** The name of the tool the model calls, as the agent declares it. */
  readonly toolName: string;
  /** The call's arguments (a JSON object). */
  readonly toolArguments: Record<string, unknown>;
}

export interface AgentFake extends Fake {
  /** The JSON bodies received on chat completions and the Responses API, in order. */
  bodies(): Array<Record<string, any>>;
  /** The tool results the agent sent back (chat `tool` messages and Responses `function_call_output` items), as text. */
  toolResults(): string[];
}

type Turn = { readonly kind: 'call' } | { readonly kind: 'text'; readonly text: string };

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((part) => (typeof part === 'string' ? part : (part?.text ?? part?.output ?? ''))).join('') : JSON.stringify(content ?? '');

const answerTo = (toolResult: string): string => (toolResult.includes(SECRET_LINE) ? FINAL_ANSWER : 'The notes say nothing I can read.');

const offersTool = (tools: unknown, name: string): boolean => Array.isArray(tools) && tools.some((tool) => tool?.function?.name === name || tool?.name === name);

// The task needs one call: once a tool result is in the conversation (whatever an agent appends
// after it, such as a reminder), the next turn is the answer.
function chatTurn(body: Record<string, any>, task: AgentTask): Turn {
  const result = Array.isArray(body.messages) ? body.messages.findLast((message: any) => message?.role === 'tool') : undefined;
  if (result) return { kind: 'text', text: answerTo(textOf(result.content)) };
  return offersTool(body.tools, task.toolName) ? { kind: 'call' } : { kind: 'text', text: SIDE_ANSWER };
}

function responsesTurn(body: Record<string, any>, task: AgentTask): Turn {
  const result = Array.isArray(body.input) ? body.input.findLast((item: any) => item?.type === 'function_call_output') : undefined;
  if (result) return { kind: 'text', text: answerTo(textOf(result.output)) };
  return offersTool(body.tools, task.toolName) ? { kind: 'call' } : { kind: 'text', text: SIDE_ANSWER };
}

const USAGE = { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 };
const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

function answerChat(body: Record<string, any>, turn: Turn, task: AgentTask, response: ServerResponse): void {
  const call = { id: 'call_agent_1', type: 'function', function: { name: task.toolName, arguments: JSON.stringify(task.toolArguments) } };
  const finish = turn.kind === 'call' ? 'tool_calls' : 'stop';
  const base = { id: 'chatcmpl-agent', created: 1_760_000_000, model: body.model };
  if (!body.stream) {
    const message = turn.kind === 'call' ? { role: 'assistant', content: null, tool_calls: [call] } : { role: 'assistant', content: turn.text };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage: USAGE }));
    return;
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => sse({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] });
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  if (turn.kind === 'call') {
    const [head, tail] = [call.function.arguments.slice(0, 5), call.function.arguments.slice(5)];
    response.write(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: head } }] }));
    response.write(chunk({ tool_calls: [{ index: 0, function: { arguments: tail } }] }));
  } else {
    response.write(chunk({ role: 'assistant', content: turn.text.slice(0, 9) }));
    response.write(chunk({ content: turn.text.slice(9) }));
  }
  response.write(chunk({}, finish));
  if (body.stream_options?.include_usage === true) response.write(sse({ ...base, object: 'chat.completion.chunk', choices: [], usage: USAGE }));
  response.end('data: [DONE]\n\n');
}

function answerResponses(body: Record<string, any>, turn: Turn, task: AgentTask, response: ServerResponse): void {
  const item =
    turn.kind === 'call'
      ? { id: 'fc_agent_1', type: 'function_call', status: 'completed', call_id: 'call_agent_1', name: task.toolName, arguments: JSON.stringify(task.toolArguments) }
      : { id: 'msg_agent_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: turn.text, annotations: [] }] };
  const usage = { input_tokens: 20, input_tokens_details: { cached_tokens: 0 }, output_tokens: 8, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 28 };
  const whole = (status: string, output: unknown[]) => ({ id: 'resp_agent_1', object: 'response', created_at: 1_760_000_000, status, error: null, incomplete_details: null, model: body.model, output, tools: body.tools ?? [], parallel_tool_calls: true, tool_choice: 'auto', usage: status === 'completed' ? usage : null });
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(whole('completed', [item])));
    return;
  }
  const at = { item_id: item.id, output_index: 0 };
  const events: Array<Record<string, unknown>> = [{ type: 'response.created', response: whole('in_progress', []) }, { type: 'response.in_progress', response: whole('in_progress', []) }];
  if (item.type === 'function_call') {
    events.push({ type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } });
    events.push({ type: 'response.function_call_arguments.delta', ...at, delta: item.arguments });
    events.push({ type: 'response.function_call_arguments.done', ...at, arguments: item.arguments });
  } else {
    const part = item.content![0];
    events.push({ type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    events.push({ type: 'response.content_part.added', ...at, content_index: 0, part: { ...part, text: '' } });
    events.push({ type: 'response.output_text.delta', ...at, content_index: 0, delta: part.text, logprobs: [] });
    events.push({ type: 'response.output_text.done', ...at, content_index: 0, text: part.text, logprobs: [] });
    events.push({ type: 'response.content_part.done', ...at, content_index: 0, part });
  }
  events.push({ type: 'response.output_item.done', output_index: 0, item });
  events.push({ type: 'response.completed', response: whole('completed', [item]) });
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  events.forEach((event, sequence) => response.write(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence })}\n\n`));
  response.end();
}

/** Starts the fake for one task. */
export async function startAgentFake(task: AgentTask): Promise<AgentFake> {
  const handle = (request: RecordedRequest, response: ServerResponse): void => {
    const path = request.url.split('?')[0];
    if (request.method === 'POST' && path.endsWith('/chat/completions')) return answerChat(request.json(), chatTurn(request.json(), task), task, response);
    if (request.method === 'POST' && path.endsWith('/responses')) return answerResponses(request.json(), responsesTurn(request.json(), task), task, response);
    response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `Unknown request URL: ${request.method} ${path}.`, type: 'invalid_request_error', param: null, code: 'unknown_url' } }));
  };
  const fake = await startFake(handle);
  const bodies = () => fake.requests.filter((request) => request.method === 'POST' && /\/(chat\/completions|responses)$/.test(request.url.split('?')[0])).map((request) => request.json());
  return {
    ...fake,
    bodies,
    toolResults: () =>
      bodies().flatMap((body) => [
        ...(Array.isArray(body.messages) ? body.messages.filter((message: any) => message?.role === 'tool').map((message: any) => textOf(message.content)) : []),
        ...(Array.isArray(body.input) ? body.input.filter((item: any) => item?.type === 'function_call_output').map((item: any) => textOf(item.output)) : []),
      ]),
  };
}
