import { encodeEvent } from '../../plugins/providers/bedrock/bedrock-eventstream.js';
import { type Fake, type RecordedRequest, startFake } from './openai-fake.js';

/**
 * A loopback fake of the Messages API as Anthropic, Claude on Vertex AI (rawPredict /
 * streamRawPredict) and Claude on Bedrock (InvokeModel / InvokeModelWithResponseStream) serve it:
 * a scripted Message answered as JSON, or as its event stream (SSE, or Bedrock's eventstream `chunk`
 * frames carrying each event as base64 JSON), each event in two writes so framing is split.
 */

export interface MessagesScript {
  readonly content: ReadonlyArray<Record<string, unknown>>;
  readonly stopReason?: string;
  readonly usage?: Record<string, number>;
  /** Extra events inserted after `message_start` (e.g. an unknown future event type). */
  readonly extraEvents?: ReadonlyArray<Record<string, unknown>>;
}

export type MessagesFraming = 'sse' | 'bedrock';

export interface MessagesFake extends Fake {
  /** The scripts of the next answers, in order (the last repeats). An `error` answers with that status and the provider's error body. */
  answer(...scripts: Array<MessagesScript | { error: { status: number; type: string; message: string } }>): void;
  body(index: number): Record<string, any>;
}

const DEFAULT_USAGE = { input_tokens: 25, output_tokens: 12, cache_creation_input_tokens: 3, cache_read_input_tokens: 7 };

/** The Message a script stands for. */
export function scriptedMessage(script: MessagesScript, model: string): Record<string, unknown> {
  return {
    id: 'msg_fake0001',
    type: 'message',
    role: 'assistant',
    model,
    content: script.content,
    stop_reason: script.stopReason ?? 'end_turn',
    stop_sequence: null,
    usage: { ...DEFAULT_USAGE, ...script.usage },
  };
}

/** The events of a script's Message, as Anthropic streams them (deltas split in two). */
export function scriptedEvents(script: MessagesScript, model: string): Array<Record<string, unknown>> {
  const message = scriptedMessage(script, model) as { usage: Record<string, number> };
  const { output_tokens: outputTokens, ...inputUsage } = message.usage;
  const events: Array<Record<string, unknown>> = [
    { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...inputUsage, output_tokens: 1 } } },
    { type: 'ping' },
    ...(script.extraEvents ?? []),
  ];
  const halves = (text: string) => [text.slice(0, Math.ceil(text.length / 2)), text.slice(Math.ceil(text.length / 2))].filter(Boolean);
  script.content.forEach((block, index) => {
    const delta = (value: Record<string, unknown>) => events.push({ type: 'content_block_delta', index, delta: value });
    if (block.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const text of halves(String(block.text))) delta({ type: 'text_delta', text });
    } else if (block.type === 'thinking') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const thinking of halves(String(block.thinking))) delta({ type: 'thinking_delta', thinking });
      delta({ type: 'signature_delta', signature: block.signature });
    } else if (block.type === 'tool_use') {
      events.push({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
      for (const partial of halves(JSON.stringify(block.input))) delta({ type: 'input_json_delta', partial_json: partial });
    } else {
      events.push({ type: 'content_block_start', index, content_block: block });
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push({ type: 'message_delta', delta: { stop_reason: script.stopReason ?? 'end_turn', stop_sequence: null }, usage: { output_tokens: outputTokens } });
  events.push({ type: 'message_stop' });
  return events;
}

const frame = (event: Record<string, unknown>, framing: MessagesFraming): Buffer =>
  framing === 'sse'
    ? Buffer.from(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`)
    : encodeEvent('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64') });

const isStream = (request: RecordedRequest, body: Record<string, any>): boolean => /stream/i.test(request.url) || body.stream === true;

/** The model a request names: in the body (Anthropic) or in the URL (Vertex, Bedrock). */
const modelOf = (request: RecordedRequest, body: Record<string, any>): string =>
  typeof body.model === 'string' ? body.model : decodeURIComponent(/\/models?\/([^/:]+)/.exec(request.url)?.[1] ?? 'claude');

export async function startMessagesFake(framing: MessagesFraming = 'sse'): Promise<MessagesFake> {
  let queue: Parameters<MessagesFake['answer']> = [];
  const fake = await startFake(async (request, response) => {
    const script = queue.length > 1 ? queue.shift()! : queue[0];
    const body = request.body.length ? request.json() : {};
    if (/count[-_]tokens/.test(request.url)) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(framing === 'bedrock' ? { inputTokens: 42 } : { input_tokens: 42 }));
      return;
    }
    if (!script) {
      response.writeHead(500).end('no script queued');
      return;
    }
    if ('error' in script) {
      const { status, type, message } = script.error;
      // Bedrock writes its own error shape: the message, and the exception's name in a header.
      if (framing === 'bedrock') response.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` }).end(JSON.stringify({ message }));
      else response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type, message } }));
      return;
    }
    const model = modelOf(request, body);
    if (!isStream(request, body)) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(scriptedMessage(script, model)));
      return;
    }
    response.writeHead(200, { 'content-type': framing === 'sse' ? 'text/event-stream' : 'application/vnd.amazon.eventstream' });
    for (const event of scriptedEvents(script, model)) {
      const bytes = frame(event, framing);
      response.write(bytes.subarray(0, bytes.length >> 1));
      await new Promise((resolve) => setTimeout(resolve, 1));
      response.write(bytes.subarray(bytes.length >> 1));
    }
    response.end();
  });
  return {
    ...fake,
    answer(...scripts) {
      queue = [...scripts];
    },
    body: (index) => fake.requests[index].json(),
  };
}
