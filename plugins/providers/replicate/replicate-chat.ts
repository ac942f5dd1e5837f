import {
  type ChatAdapter,
  type ChatChunkChoice,
  type ChatCompletionChunk,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type Clock,
  completionId,
  contentText,
  errors,
  isRecord,
  nowSeconds,
  requireSingleChoice,
  stopList,
  type ProviderTarget,
  type StreamStep,
  type UpstreamRequest,
} from '../../../core/spec/index.js';

/** `owner/name` (an official model: `/models/{owner}/{name}/predictions`) or `owner/name:version` (`/predictions` with the version). */
const MODEL = /^([a-z0-9][a-z0-9_.-]*)\/([a-z0-9][a-z0-9_.-]*)(?::([0-9a-f]{64}))?$/i;

/** Chat fields Replicate's language models have no input for: refused with a 400 naming them. */
const UNSUPPORTED = ['tools', 'tool_choice', 'response_format', 'logprobs', 'top_logprobs', 'logit_bias', 'parallel_tool_calls'] as const;

const LABEL: Record<string, string> = { user: 'User', assistant: 'Assistant', tool: 'Tool' };

/** The path and version a model name runs at. */
export function predictionPath(model: string): { path: string; version?: string } {
  const match = MODEL.exec(model);
  if (!match) throw errors.invalidRequest(`Replicate models are "owner/name" or "owner/name:<64-hex version>", got "${model.slice(0, 80)}".`, { param: 'model', code: 'invalid_value' });
  return match[3] ? { path: '/predictions', version: match[3] } : { path: `/models/${match[1]}/${match[2]}/predictions` };
}

/** An assistant turn as text: its content, and any calls it made (a tool-less model reads them as prose). */
function assistantText(message: ChatMessage, param: string): string {
  const text = message.content == null ? '' : contentText(message.content, param);
  const calls = (message.tool_calls ?? []).map((call) => `[called ${call.function.name}(${call.function.arguments})]`);
  return [text, ...calls].filter(Boolean).join('\n');
}

/**
 * The conversation as Replicate's language-model inputs: system and developer messages become
 * `system_prompt`; one user turn is the `prompt` as written; a longer conversation is written out
 * as a labelled transcript ending with `Assistant:` (the models take one prompt, not a list).
 */
export function toReplicateInput(request: ChatRequest): Record<string, unknown> {
  for (const field of UNSUPPORTED) {
    if (request[field] !== undefined && request[field] !== null) throw errors.invalidRequest(`Replicate's language models take no "${field}".`, { param: field, code: 'unsupported_parameter' });
  }
  requireSingleChoice(request.n, 'replicate');
  const system: string[] = [];
  const turns: Array<{ role: string; text: string }> = [];
  request.messages.forEach((message, index) => {
    const param = `messages[${index}].content`;
    if (message.role === 'system' || message.role === 'developer') system.push(contentText(message.content ?? '', param));
    else if (message.role === 'assistant') turns.push({ role: 'assistant', text: assistantText(message, param) });
    else turns.push({ role: message.role, text: contentText(message.content ?? '', param) });
  });
  if (turns.length === 0) throw errors.invalidRequest('Replicate needs a user message to answer.', { param: 'messages', code: 'invalid_value' });
  const prompt = turns.length === 1 && turns[0].role === 'user' ? turns[0].text : `${turns.map((turn) => `${LABEL[turn.role] ?? 'User'}: ${turn.text}`).join('\n\n')}\n\nAssistant:`;
  const input: Record<string, unknown> = { prompt };
  if (system.length > 0) input.system_prompt = system.join('\n\n');
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === 'number') input.max_tokens = maxTokens;
  for (const field of ['temperature', 'top_p', 'seed', 'presence_penalty', 'frequency_penalty'] as const) {
    if (typeof request[field] === 'number') input[field] = request[field];
  }
  const stop = stopList(request.stop) ?? [];
  if (stop.length > 0) {
    if (stop.some((sequence) => sequence.includes(','))) throw errors.invalidRequest('Replicate takes stop sequences as one comma-separated list: a sequence cannot hold a comma.', { param: 'stop', code: 'invalid_value' });
    input.stop_sequences = stop.join(',');
  }
  return input;
}

interface Prediction {
  id?: string;
  status?: string;
  output?: unknown;
  error?: unknown;
  created_at?: string;
  metrics?: { input_token_count?: number; output_token_count?: number };
  urls?: { get?: string; stream?: string };
}

/** The prediction's text: language models answer a list of tokens (joined), some a string. */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output) && output.every((piece) => typeof piece === 'string')) return output.join('');
  throw new TypeError('Replicate prediction output is not text');
}

/** A finished prediction as a chat completion; a failed, canceled or unfinished one as the error it is. */
export function fromPrediction(body: unknown, request: ChatRequest, clock?: Clock): ChatResponse {
  if (!isRecord(body)) throw new TypeError('Replicate answer is not a prediction');
  const prediction = body as Prediction;
  if (prediction.status === 'failed' || prediction.status === 'canceled') {
    const reason = typeof prediction.error === 'string' && prediction.error ? prediction.error : `the prediction was ${prediction.status}`;
    throw errors.badGateway(`Replicate prediction ${prediction.id ?? ''} ${prediction.status}: ${reason}`, { code: 'upstream_generation_failed' });
  }
  if (prediction.status !== 'succeeded') {
    throw errors.upstreamTimeout(`Replicate prediction ${prediction.id ?? ''} did not finish while the request waited (status ${String(prediction.status)}); it is still running upstream.`, {
      code: 'upstream_timeout',
    });
  }
  const content = outputText(prediction.output);
  const prompt = prediction.metrics?.input_token_count ?? 0;
  const completion = prediction.metrics?.output_token_count ?? 0;
  const limit = request.max_completion_tokens ?? request.max_tokens;
  const cut = typeof limit === 'number' && completion >= limit;
  return {
    id: prediction.id ? `chatcmpl-${prediction.id}` : completionId(),
    object: 'chat.completion',
    created: nowSeconds(clock),
    model: request.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: cut ? 'length' : 'stop' }],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

/**
 * Replicate's prediction stream (`urls.stream`, server-sent events): `output` events carry text,
 * `done` ends it (`{"reason": "canceled" | "error"}` when it did not finish), `error` reports a
 * failure. It carries no token counts; each `output` event is one token, so as many as the request's
 * token limit end the answer with `length`.
 */
export function createReplicateStreamMapper(request: ChatRequest, clock?: Clock) {
  const id = completionId();
  const created = nowSeconds(clock);
  let opened = false;
  let outputs = 0;
  const limit = [request.max_completion_tokens, request.max_tokens].find((value): value is number => typeof value === 'number');
  const chunk = (choice: ChatChunkChoice): ChatCompletionChunk => ({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [choice], usage: null });
  return {
    map(event: { event?: string; data: string }): StreamStep {
      if (event.event === 'output') {
        outputs += 1;
        const delta = opened ? { content: event.data } : { role: 'assistant' as const, content: event.data };
        opened = true;
        return { chunks: [chunk({ index: 0, delta, logprobs: null, finish_reason: null })] };
      }
      if (event.event === 'error') {
        let detail = event.data;
        try {
          const parsed = JSON.parse(event.data) as { detail?: unknown };
          if (typeof parsed.detail === 'string') detail = parsed.detail;
        } catch {
          // A plain-text error is its own message.
        }
        return { error: { message: detail || 'Replicate reported an error in the stream.', type: 'upstream_error', param: null, code: 'upstream_generation_failed' } };
      }
      if (event.event === 'done') {
        let reason: unknown;
        try {
          reason = (JSON.parse(event.data || '{}') as { reason?: unknown }).reason;
        } catch {
          reason = undefined;
        }
        if (reason === 'canceled' || reason === 'error') return { error: { message: `The Replicate prediction ended: ${reason}.`, type: 'upstream_error', param: null, code: 'upstream_generation_failed' } };
        // One `output` event per token: as many as the limit means the limit cut the answer.
        const cut = limit !== undefined && outputs >= limit;
        return { chunks: [chunk({ index: 0, delta: {}, logprobs: null, finish_reason: cut ? 'length' : 'stop' })], done: true };
      }
      return {};
    },
  };
}

/**
 * The request that opens a prediction's stream (`urls.stream`, server-sent events). The URL comes
 * from an upstream's answer and gets the API token, so it is followed only to Replicate's own hosts
 * over https, or to the origin the prediction was created at (a custom host, a proxy).
 */
export function streamRequest(body: unknown, target: ProviderTarget): UpstreamRequest {
  if (!isRecord(body)) throw new TypeError('Replicate answer is not a prediction');
  const prediction = body as Prediction;
  if (prediction.status === 'failed' || prediction.status === 'canceled') fromPrediction(body, { model: '', messages: [] });
  const url = prediction.urls?.stream;
  if (typeof url !== 'string') throw errors.badGateway('The Replicate prediction names no stream (urls.stream): the model does not stream its output.', { code: 'upstream_invalid_response' });
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError('Replicate stream URL is not a URL');
  }
  const replicateHost = parsed.protocol === 'https:' && (parsed.hostname === 'replicate.com' || parsed.hostname.endsWith('.replicate.com') || parsed.hostname.endsWith('.replicate.delivery'));
  if (!replicateHost && parsed.origin !== new URL(target.baseUrl).origin) {
    throw errors.badGateway(`The Replicate prediction's stream is on another host (${parsed.host}) than Replicate's or the prediction's; the gateway does not follow it.`, { code: 'upstream_invalid_response' });
  }
  return { method: 'GET', url: parsed.href, headers: { accept: 'text/event-stream', 'cache-control': 'no-store' } };
}

/**
 * Whether a streamed request follows the prediction's token stream. Not when the client asks for the
 * usage (`stream_options.include_usage`): the stream carries no token counts, so that request waits
 * for the finished prediction (its `metrics`) and the gateway renders it as a stream.
 */
const followsStream = (request: ChatRequest): boolean => request.stream === true && request.stream_options?.include_usage !== true;

/**
 * Chat on a Replicate language model: a plain request creates the prediction with `Prefer: wait`,
 * so the answer is the finished prediction. A streamed one creates it with `stream: true` and
 * follows its `urls.stream` (a second request the core sends), whose `output` events are the tokens.
 */
export function replicateChat(clock?: Clock): ChatAdapter {
  return {
    validate(request) {
      toReplicateInput(request);
      predictionPath(request.model);
      return undefined;
    },
    toUpstream(request, target) {
      const { path, version } = predictionPath(request.model);
      const stream = followsStream(request);
      const body = { ...(version ? { version } : {}), input: toReplicateInput(request), ...(stream ? { stream: true } : {}) };
      const headers: Record<string, string> = stream ? { 'content-type': 'application/json' } : { 'content-type': 'application/json', prefer: 'wait' };
      return { method: 'POST', url: `${target.baseUrl}${path}`, headers, body: JSON.stringify(body) };
    },
    fromUpstream: (body, request) => fromPrediction(body, request, clock),
    stream: {
      createMapper: (request) => createReplicateStreamMapper(request, clock),
      follow: (body, request, target) => (followsStream(request) ? streamRequest(body, target) : undefined),
    },
  };
}
