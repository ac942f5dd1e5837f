import type { ServerResponse } from 'node:http';
import { type Fake, type RecordedRequest, startFake } from './openai-fake.js';

/**
 * A loopback fake of the Responses API as OpenAI and Azure OpenAI serve it (`POST …/responses`):
 * the Response object, or its documented event stream (each event a separate write), for the
 * answer queued with `answer`. It records what it received.
 */

export type NativeAnswer =
  | { readonly kind: 'text'; readonly text: string; readonly status?: 'completed' | 'incomplete'; readonly webSearch?: boolean; readonly reasoning?: string }
  | { readonly kind: 'call'; readonly name: string; readonly arguments: string; readonly callId: string }
  | { readonly kind: 'error'; readonly status: number; readonly message: string }
  /** A stream that reports an error event mid-way. */
  | { readonly kind: 'streamError'; readonly text: string; readonly message: string };

export interface ResponsesFake extends Fake {
  answer(...answers: NativeAnswer[]): void;
  /** The JSON bodies received, in order. */
  bodies(): Array<Record<string, any>>;
}

const USAGE = { input_tokens: 21, input_tokens_details: { cached_tokens: 4 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 30 };

let counter = 0;
const id = (prefix: string) => `${prefix}_fake${String(++counter).padStart(8, '0')}`;

function output(answer: Exclude<NativeAnswer, { kind: 'error' | 'streamError' }>): Array<Record<string, any>> {
  if (answer.kind === 'call') return [{ id: id('fc'), type: 'function_call', status: 'completed', call_id: answer.callId, name: answer.name, arguments: answer.arguments }];
  const items: Array<Record<string, any>> = [];
  if (answer.reasoning) items.push({ id: id('rs'), type: 'reasoning', summary: [{ type: 'summary_text', text: answer.reasoning }], encrypted_content: 'openai-sealed-reasoning' });
  if (answer.webSearch) items.push({ id: id('ws'), type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'fake query' } });
  items.push({ id: id('msg'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: answer.text, annotations: [], logprobs: [] }] });
  return items;
}

function responseOf(body: Record<string, any>, items: Array<Record<string, any>>, status: string): Record<string, any> {
  return {
    id: id('resp'),
    object: 'response',
    created_at: 1_760_000_000,
    status,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    model: body.model,
    output: items,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: body.tools ?? [],
    usage: status === 'in_progress' ? null : USAGE,
  };
}

/** The events of one item, deltas split in pieces of a few characters. */
function itemEvents(item: Record<string, any>, outputIndex: number): Array<Record<string, any>> {
  const pieces = (text: string) => text.match(/.{1,6}/gs) ?? [''];
  const events: Array<Record<string, any>> = [];
  const at = { item_id: item.id, output_index: outputIndex };
  if (item.type === 'message') {
    events.push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } });
    const text = item.content[0].text;
    events.push({ type: 'response.content_part.added', ...at, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (const delta of pieces(text)) events.push({ type: 'response.output_text.delta', ...at, content_index: 0, delta, logprobs: [] });
    events.push({ type: 'response.output_text.done', ...at, content_index: 0, text, logprobs: [] });
    events.push({ type: 'response.content_part.done', ...at, content_index: 0, part: item.content[0] });
  } else if (item.type === 'function_call') {
    events.push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } });
    for (const delta of pieces(item.arguments)) events.push({ type: 'response.function_call_arguments.delta', ...at, delta });
    events.push({ type: 'response.function_call_arguments.done', ...at, arguments: item.arguments });
  } else if (item.type === 'reasoning') {
    events.push({ type: 'response.output_item.added', output_index: outputIndex, item: { id: item.id, type: 'reasoning', summary: [] } });
    const text = item.summary[0].text;
    events.push({ type: 'response.reasoning_summary_part.added', ...at, summary_index: 0, part: { type: 'summary_text', text: '' } });
    for (const delta of pieces(text)) events.push({ type: 'response.reasoning_summary_text.delta', ...at, summary_index: 0, delta });
    events.push({ type: 'response.reasoning_summary_text.done', ...at, summary_index: 0, text });
    events.push({ type: 'response.reasoning_summary_part.done', ...at, summary_index: 0, part: { type: 'summary_text', text } });
  } else {
    events.push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress' } });
    events.push({ type: 'response.web_search_call.completed', ...at });
  }
  events.push({ type: 'response.output_item.done', output_index: outputIndex, item });
  return events;
}

async function writeStream(response: ServerResponse, events: Array<Record<string, any>>): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  let sequence = 0;
  for (const event of events) {
    response.write(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence++ })}\n\n`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}

const json = (response: ServerResponse, status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

export async function startResponsesFake(): Promise<ResponsesFake> {
  let queue: NativeAnswer[] = [];
  const fake = await startFake(async (request: RecordedRequest, response) => {
    const answer = queue.length > 1 ? queue.shift()! : queue[0];
    if (request.method !== 'POST' || !/\/responses(\?|$)/.test(request.url) || !answer) {
      json(response, 404, { error: { message: 'not found', type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    const body = request.json();
    if (answer.kind === 'error') {
      json(response, answer.status, { error: { message: answer.message, type: 'invalid_request_error', param: null, code: 'fake_error' } });
      return;
    }
    if (answer.kind === 'streamError') {
      const created = responseOf(body, [], 'in_progress');
      const item = { id: id('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
      await writeStream(response, [
        { type: 'response.created', response: created },
        { type: 'response.in_progress', response: created },
        { type: 'response.output_item.added', output_index: 0, item },
        { type: 'response.content_part.added', item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
        { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: answer.text, logprobs: [] },
        { type: 'error', code: 'server_error', message: answer.message, param: null },
      ]);
      return;
    }
    const items = output(answer);
    const status = answer.kind === 'text' && answer.status ? answer.status : 'completed';
    if (!body.stream) {
      json(response, 200, responseOf(body, items, status));
      return;
    }
    const created = responseOf(body, [], 'in_progress');
    const events = [{ type: 'response.created', response: created }, { type: 'response.in_progress', response: created }, ...items.flatMap((item, index) => itemEvents(item, index))];
    events.push({ type: status === 'incomplete' ? 'response.incomplete' : 'response.completed', response: { ...responseOf(body, items, status), id: created.id } });
    await writeStream(response, events);
  });
  return {
    ...fake,
    answer(...answers) {
      queue = [...answers];
    },
    bodies: () => fake.requests.map((request) => request.json()),
  };
}
