import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProviderFakeRenderer, type ReceivedRequest, type RenderedAnswer, requestJson, type Scenario, splitText } from '../../../core/spec/index.js';

const fixtures = join(process.cwd(), 'plugins/providers/replicate/__fixtures__');

export const replicateFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

const JSON_TYPE = { 'content-type': 'application/json' };
const TITLE: Record<number, string> = { 400: 'Bad request', 401: 'Unauthenticated', 403: 'Forbidden', 404: 'Not found', 422: 'Input validation failed', 429: 'Request was throttled', 500: 'Internal server error', 503: 'Service unavailable' };
const PATH = /^\/v1\/(?:models\/[^/]+\/[^/]+\/predictions|predictions)$/;
/** Where the fake serves a prediction's stream (`urls.stream`), on its own origin. */
const STREAM_PATH = /^\/v1\/files\/fake-stream-[a-z0-9]+$/;

const problem = (status: number, detail: string, retryAfter?: string, extra: Record<string, unknown> = {}): RenderedAnswer => ({
  status,
  headers: { 'content-type': 'application/problem+json', ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }) },
  chunks: [JSON.stringify({ title: TITLE[status] ?? 'Error', detail, status, ...extra })],
});

/** A prediction object as Replicate answers it. */
function prediction(request: ReceivedRequest, fields: Record<string, unknown>): string {
  const body = requestJson(request);
  const id = 'gm3qorzdhgbfurvjtvhg6dckhu';
  return JSON.stringify({
    id,
    model: /\/models\/([^/]+\/[^/]+)\//.exec(request.url)?.[1] ?? 'replicate/community-model',
    version: body.version ?? 'hidden',
    input: body.input,
    logs: '',
    error: null,
    created_at: '2026-11-29T00:40:00.000Z',
    data_removed: false,
    urls: {
      cancel: `https://api.replicate.com/v1/predictions/${id}/cancel`,
      get: `https://api.replicate.com/v1/predictions/${id}`,
      ...(body.stream === true ? { stream: `http://${request.headers.host ?? '127.0.0.1'}/v1/files/fake-stream-${id}` } : {}),
    },
    ...fields,
  });
}

/** What Replicate would refuse: another path, a body without `input.prompt`, OpenAI's chat fields. */
function refusal(request: ReceivedRequest): RenderedAnswer | undefined {
  if (request.method !== 'POST' || !PATH.test(request.url.split('?')[0])) return problem(404, `no route for ${request.method} ${request.url}`);
  const body = requestJson(request);
  const input = body.input as Record<string, unknown> | undefined;
  if (!input || typeof input.prompt !== 'string') return problem(422, '- input: prompt is required', undefined, { invalid_fields: [{ type: 'required', field: 'input.prompt', description: 'prompt is required' }] });
  for (const field of ['messages', 'model', 'stream_options', 'stop', 'max_completion_tokens']) {
    if (field in body || field in input) return problem(422, `- input: Additional property ${field} is not allowed`);
  }
  if (request.url.startsWith('/v1/predictions') && typeof body.version !== 'string') return problem(422, '- version: version is required');
  return undefined;
}

/** The turns the fake reads back from the prompt: a labelled transcript, or one user turn. */
function turns(prompt: string): string[] {
  const labels = [...prompt.matchAll(/^(User|Assistant|Tool):/gm)].map((match) => ({ User: 'user', Assistant: 'assistant', Tool: 'tool' })[match[1] as 'User' | 'Assistant' | 'Tool']);
  if (labels.length === 0) return ['user'];
  // The last `Assistant:` is the cue for the answer, not a turn.
  return prompt.trimEnd().endsWith('Assistant:') ? labels.slice(0, -1) : labels;
}

/** One server-sent event: a text with newlines takes one `data:` line per line. */
const sse = (event: string, data: string, id: number): string => `event: ${event}\nid: ${id}\n${data.split('\n').map((line) => `data: ${line}`).join('\n')}\n\n`;

/**
 * A prediction's stream: an `output` event per token, then `done`; a truncated scenario stops
 * before `done`; an error scenario (or one the models cannot answer) is an `error` event, as
 * Replicate reports a prediction that fails once its stream is open.
 */
function renderStream(scenario: Scenario): RenderedAnswer {
  const headers = { 'content-type': 'text/event-stream', 'cache-control': 'no-store' };
  if (scenario.kind !== 'text' && scenario.kind !== 'truncated') {
    const detail = scenario.kind === 'error' ? scenario.message : `the fake cannot stream a ${scenario.kind} scenario`;
    return { status: 200, headers, chunks: [sse('error', JSON.stringify({ detail }), 0)] };
  }
  // One `output` event per token.
  const output = splitText(scenario.text, scenario.kind === 'text' ? scenario.usage.completionTokens : 3).map((piece, index) => sse('output', piece, index));
  return { status: 200, headers, chunks: scenario.kind === 'truncated' ? output : [...output, sse('done', '{}', output.length)] };
}

/**
 * Replicate's predictions API, faked: a prediction created with `Prefer: wait` answers finished
 * (`status: "succeeded"`, the output as a list of tokens, token counts in `metrics`); without the
 * header it answers `starting`, as Replicate does. One created with `stream: true` answers
 * `starting` with `urls.stream` on the fake's own origin, where a GET with `Accept:
 * text/event-stream` gets the tokens as `output` events, then `done`. Errors are problem documents.
 */
export const replicateFake: ProviderFakeRenderer = {
  classify: (request) => {
    const path = request.url.split('?')[0];
    if (request.method === 'GET' && STREAM_PATH.test(path)) return { operation: 'chat', stream: true };
    return { operation: PATH.test(path) ? 'chat' : 'other', stream: false };
  },
  render(scenario: Scenario, request: ReceivedRequest): RenderedAnswer {
    if (request.method === 'GET' && STREAM_PATH.test(request.url.split('?')[0])) {
      return request.headers.accept === 'text/event-stream' ? renderStream(scenario) : problem(406, 'the stream is served as text/event-stream');
    }
    if (scenario.kind === 'error') return problem(scenario.status, scenario.message, scenario.retryAfter);
    const refused = refusal(request);
    if (refused) return refused;
    if (requestJson(request).stream === true) return { status: 201, headers: JSON_TYPE, chunks: [prediction(request, { status: 'starting', output: null, metrics: {} })] };
    if (request.headers.prefer !== 'wait' || scenario.kind === 'truncated') {
      // Not waited for (or not finished in time): the prediction is still running.
      return { status: 201, headers: JSON_TYPE, chunks: [prediction(request, { status: 'starting', output: null, metrics: {} })] };
    }
    if (scenario.kind !== 'text') return problem(422, `the fake cannot answer a ${scenario.kind} scenario: Replicate's language models take no tools`);
    const metrics = { input_token_count: scenario.usage.promptTokens, output_token_count: scenario.usage.completionTokens, predict_time: 0.41, total_time: 0.43 };
    return { status: 201, headers: JSON_TYPE, chunks: [prediction(request, { status: 'succeeded', output: splitText(scenario.text, 6), metrics, completed_at: '2026-11-29T00:40:01.000Z' })] };
  },
  checkAuth: (request, credential) => (request.headers.authorization === `Bearer ${credential}` ? [] : ['expected "Authorization: Bearer <token>"']),
  roles(request) {
    const input = (requestJson(request).input ?? {}) as { prompt?: string; system_prompt?: string };
    return [...(input.system_prompt !== undefined ? ['system'] : []), ...turns(input.prompt ?? '')];
  },
  stopSequences: (request) => String((requestJson(request).input ?? {}).stop_sequences ?? '').split(',').filter(Boolean),
};
