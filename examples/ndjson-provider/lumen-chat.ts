import {
  type ChatAdapter,
  type ChatChunkBuilder,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type Clock,
  type StreamStep,
  chatChunks,
  contentText,
  functionTools,
  MALFORMED_EVENT,
  NdjsonDecoder,
  nowSeconds,
  parseEventData,
  requireSingleChoice,
  stopList,
  streamError,
  tokenUsage,
  toolInput,
} from '../../core/spec/provider/index.js';

/** Lumen's own wire format (a made-up API that streams newline-delimited JSON). */
export interface LumenMessage {
  from: 'user' | 'bot' | 'tool';
  text: string;
  call_id?: string;
  calls?: LumenCall[];
}
export interface LumenCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}
export interface LumenRequest {
  model: string;
  instructions?: string;
  messages: LumenMessage[];
  max_output?: number;
  stop?: string[];
  tools?: Array<{ name: string; description?: string; parameters: Record<string, unknown> }>;
  stream?: boolean;
}
export interface LumenAnswer {
  id: string;
  model: string;
  text: string;
  calls?: LumenCall[];
  stop_reason: 'end' | 'max_output' | 'tool_use';
  usage: { input: number; output: number };
}

const FINISH: Record<LumenAnswer['stop_reason'], string> = { end: 'stop', max_output: 'length', tool_use: 'tool_calls' };

function toMessage(message: ChatMessage, index: number): LumenMessage {
  const text = contentText(message.content, `messages[${index}].content`);
  if (message.role === 'tool') return { from: 'tool', text, call_id: message.tool_call_id };
  if (message.role !== 'assistant') return { from: 'user', text };
  const calls = message.tool_calls?.map((call) => ({ id: call.id, name: call.function.name, arguments: toolInput(call.function.arguments) }));
  return { from: 'bot', text, ...(calls?.length ? { calls } : {}) };
}

/** The unified request as Lumen's. The core has already turned `developer` messages into `system` (Lumen has no developer role). */
export function toLumenRequest(request: ChatRequest): LumenRequest {
  const instructions = request.messages.flatMap((message, index) => (message.role === 'system' ? [contentText(message.content, `messages[${index}].content`)] : []));
  const stop = stopList(request.stop);
  const tools = functionTools(request.tools);
  const limit = request.max_completion_tokens ?? request.max_tokens;
  return {
    model: request.model,
    ...(instructions.length ? { instructions: instructions.join('\n\n') } : {}),
    messages: request.messages.flatMap((message, index) => (message.role === 'system' ? [] : [toMessage(message, index)])),
    ...(typeof limit === 'number' ? { max_output: limit } : {}),
    ...(stop ? { stop } : {}),
    ...(tools.length ? { tools } : {}),
    ...(request.stream ? { stream: true } : {}),
  };
}

/** Lumen's answer as a unified chat completion; `created` is read from the gateway's clock. */
export function fromLumenAnswer(answer: LumenAnswer, clock: Clock): ChatResponse {
  const calls = answer.calls?.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.arguments) } }));
  return {
    id: answer.id,
    object: 'chat.completion',
    created: nowSeconds(clock),
    model: answer.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: calls?.length ? answer.text || null : answer.text, ...(calls?.length ? { tool_calls: calls } : {}) },
        finish_reason: FINISH[answer.stop_reason],
        logprobs: null,
      },
    ],
    usage: tokenUsage(answer.usage.input, answer.usage.output),
  };
}

/** Lumen streams one JSON object a line: `start`, `text`, `call`, `arguments`, `done`, `error`. */
export function createLumenStreamMapper(request: ChatRequest, clock: Clock) {
  let chunks: ChatChunkBuilder | undefined;
  const builder = (id?: unknown) => (chunks ??= chatChunks({ model: request.model, id: typeof id === 'string' ? id : undefined, clock }));
  let calls = -1;
  return {
    map(event: { data: string }): StreamStep {
      const data = parseEventData(event.data);
      if (!data) return { error: MALFORMED_EVENT };
      switch (data.type) {
        case 'start':
          builder(data.id);
          return {};
        case 'text':
          return { chunks: builder().delta({ content: String(data.text ?? '') }) };
        case 'call':
          calls++;
          return { chunks: builder().delta({ tool_calls: [{ index: calls, id: String(data.id), type: 'function', function: { name: String(data.name), arguments: '' } }] }) };
        case 'arguments':
          return { chunks: builder().delta({ tool_calls: [{ index: calls, function: { arguments: String(data.text ?? '') } }] }) };
        case 'done': {
          const usage = (data.usage ?? {}) as Partial<LumenAnswer['usage']>;
          const reason = FINISH[data.stop_reason as LumenAnswer['stop_reason']] ?? 'stop';
          return { chunks: [...builder().finish(reason), builder().usage(tokenUsage(usage.input, usage.output))], done: true };
        }
        case 'error':
          return { error: streamError(String(data.message ?? 'Lumen failed.'), String(data.code ?? 'lumen_error'), 'api_error') };
        default:
          return {}; // unknown lines (keep-alives) are ignored
      }
    },
  };
}

/** The chat adapter, on the clock the plugin's `create` received. */
export function lumenChat(clock: Clock): ChatAdapter {
  return {
    toUpstream: (request, target) => ({
      method: 'POST',
      url: `${target.baseUrl}/v1/generate`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(toLumenRequest(request)),
    }),
    fromUpstream(body) {
      const answer = body as LumenAnswer;
      if (typeof answer?.text !== 'string' || typeof answer.usage !== 'object') throw new TypeError('Lumen answer without text or usage');
      return fromLumenAnswer(answer, clock);
    },
    validate(request) {
      requireSingleChoice(request.n, 'lumen');
    },
    stream: {
      createDecoder: () => new NdjsonDecoder(),
      createMapper: (request) => createLumenStreamMapper(request, clock),
    },
  };
}
