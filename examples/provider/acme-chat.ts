import {
  type ChatAdapter,
  type ChatChunkChoice,
  type ChatCompletionChunk,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  errors,
  type StreamStep,
} from '../../core/spec/index.js';

/** Acme's own wire format (a made-up API, different enough from OpenAI's to show every mapping). */
export interface AcmeTurn {
  speaker: 'user' | 'model' | 'tool';
  text: string;
  call_id?: string;
  calls?: AcmeCall[];
}
export interface AcmeCall {
  id: string;
  name: string;
  input: unknown;
}
export interface AcmeRequest {
  model: string;
  system?: string;
  turns: AcmeTurn[];
  limit: number;
  stop_at?: string[];
  tools?: Array<{ name: string; about?: string; schema?: unknown }>;
  stream?: boolean;
}
export interface AcmeAnswer {
  id: string;
  model: string;
  output: { text: string; calls?: AcmeCall[] };
  end: 'done' | 'limit' | 'call';
  tokens: { in: number; out: number };
}

/** Acme requires a generation limit; this is sent when the client gave none. */
export const DEFAULT_LIMIT = 1024;

const FINISH: Record<AcmeAnswer['end'], string> = { done: 'stop', limit: 'length', call: 'tool_calls' };
const text = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : '')).join('')
      : '';

function toTurn(message: ChatMessage): AcmeTurn {
  if (message.role === 'assistant') {
    const calls = message.tool_calls?.map((call) => ({ id: call.id, name: call.function.name, input: JSON.parse(call.function.arguments || '{}') as unknown }));
    return { speaker: 'model', text: text(message.content), ...(calls ? { calls } : {}) };
  }
  if (message.role === 'tool') return { speaker: 'tool', text: text(message.content), call_id: message.tool_call_id };
  return { speaker: 'user', text: text(message.content) };
}

/** The unified request as Acme's. The core has already turned `developer` messages into `system` (Acme has no developer role). */
export function toAcmeRequest(request: ChatRequest): AcmeRequest {
  const system = request.messages.filter((message) => message.role === 'system').map((message) => text(message.content));
  const stop = request.stop == null ? undefined : Array.isArray(request.stop) ? (request.stop as string[]) : [request.stop as string];
  const tools = request.tools as Array<{ function: { name: string; description?: string; parameters?: unknown } }> | undefined;
  return {
    model: request.model,
    ...(system.length ? { system: system.join('\n\n') } : {}),
    turns: request.messages.filter((message) => message.role !== 'system').map(toTurn),
    limit: Number(request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_LIMIT),
    ...(stop ? { stop_at: stop } : {}),
    ...(tools?.length ? { tools: tools.map((tool) => ({ name: tool.function.name, about: tool.function.description, schema: tool.function.parameters })) } : {}),
    ...(request.stream ? { stream: true } : {}),
  };
}

const usageOf = (tokens: AcmeAnswer['tokens']) => ({ prompt_tokens: tokens.in, completion_tokens: tokens.out, total_tokens: tokens.in + tokens.out });

/** Acme's answer as a unified chat completion. */
export function fromAcmeAnswer(answer: AcmeAnswer): ChatResponse {
  const calls = answer.output.calls?.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.input) } }));
  return {
    id: answer.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: answer.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: calls?.length ? answer.output.text || null : answer.output.text, ...(calls?.length ? { tool_calls: calls } : {}) },
        finish_reason: FINISH[answer.end],
        logprobs: null,
      },
    ],
    usage: usageOf(answer.tokens),
  };
}

/** The data of Acme's stream events (each event uses its own fields). */
interface AcmeEvent {
  delta?: string;
  id?: string;
  name?: string;
  partial?: string;
  end?: AcmeAnswer['end'];
  tokens?: AcmeAnswer['tokens'];
  fault?: { reason?: string; kind?: string };
}

/** Acme streams named SSE events: `text`, `call`, `call_input`, `end`, `failure`. */
function createAcmeStreamMapper(request: ChatRequest) {
  const base = { id: `acme-${Date.now()}`, object: 'chat.completion.chunk' as const, created: Math.floor(Date.now() / 1000), model: request.model };
  const chunk = (choices: ChatChunkChoice[], usage: ChatCompletionChunk['usage'] = null): ChatCompletionChunk => ({ ...base, choices, usage });
  const delta = (value: ChatChunkChoice['delta'], finishReason: string | null = null) => chunk([{ index: 0, delta: value, finish_reason: finishReason }]);
  let started = false;
  let calls = -1;
  return {
    map(event: { event?: string; data: string }): StreamStep {
      const data = JSON.parse(event.data) as AcmeEvent;
      const opening = started ? [] : [delta({ role: 'assistant', content: '' })];
      started = true;
      switch (event.event) {
        case 'text':
          return { chunks: [...opening, delta({ content: data.delta ?? '' })] };
        case 'call':
          calls++;
          return { chunks: [...opening, delta({ tool_calls: [{ index: calls, id: data.id, type: 'function', function: { name: data.name ?? '', arguments: '' } }] })] };
        case 'call_input':
          return { chunks: [...opening, delta({ tool_calls: [{ index: calls, function: { arguments: data.partial ?? '' } }] })] };
        case 'end':
          return { chunks: [...opening, delta({}, FINISH[data.end ?? 'done']), chunk([], usageOf(data.tokens ?? { in: 0, out: 0 }))], done: true };
        case 'failure':
          return { error: { message: data.fault?.reason ?? 'Acme failed.', type: 'api_error', param: null, code: data.fault?.kind ?? null } };
        default:
          return {}; // unknown events (keep-alives) are ignored
      }
    },
  };
}

export const acmeChat: ChatAdapter = {
  toUpstream: (request, target) => ({
    method: 'POST',
    url: `${target.baseUrl}/v2/generate`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(toAcmeRequest(request)),
  }),
  fromUpstream(body) {
    const answer = body as AcmeAnswer;
    if (typeof answer?.output !== 'object') throw new TypeError('Acme answer without output');
    return fromAcmeAnswer(answer);
  },
  validate(request) {
    if (typeof request.n === 'number' && request.n > 1) throw errors.invalidRequest('Acme returns one answer per request: n must be 1.', { param: 'n', code: 'invalid_value' });
  },
  stream: { createMapper: (request) => createAcmeStreamMapper(request) },
};
