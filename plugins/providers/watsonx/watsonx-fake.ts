import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProviderFakeRenderer, type ReceivedRequest, type RenderedAnswer, requestJson, type Scenario, splitText } from '../../../core/spec/index.js';

const fixtures = join(process.cwd(), 'plugins/providers/watsonx/__fixtures__');

export const watsonxFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** The project the conformance subject names in `x-gateway-watsonx-project-id`. */
export const FAKE_PROJECT = '63dc4cf1-252f-424b-b52d-5cdd9814987f';

const JSON_TYPE = { 'content-type': 'application/json' };
const SSE_TYPE = { 'content-type': 'text/event-stream' };

const CODE_BY_STATUS: Record<number, string> = { 400: 'json_validation_error', 401: 'authentication_token_expired', 403: 'authorization_rejected', 404: 'model_not_supported', 429: 'token_quota_reached', 500: 'internal_error', 503: 'service_unavailable' };

/** watsonx.ai's error envelope. */
const failure = (status: number, message: string, retryAfter?: string): RenderedAnswer => ({
  status,
  headers: retryAfter === undefined ? JSON_TYPE : { ...JSON_TYPE, 'retry-after': retryAfter },
  chunks: [JSON.stringify({ errors: [{ code: CODE_BY_STATUS[status] ?? 'error', message, more_info: 'https://cloud.ibm.com/apidocs/watsonx-ai' }], trace: 'fake-trace', status_code: status })],
});

/** What the real API would refuse in a request (wrong path or version, no project, OpenAI's names). */
function refusal(request: ReceivedRequest): string | undefined {
  const [path, query = ''] = request.url.split('?');
  if (!path.endsWith('/ml/v1/text/chat') && !path.endsWith('/ml/v1/text/chat_stream')) return `no route for ${path}`;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(new URLSearchParams(query).get('version') ?? '')) return "Missing or invalid query parameter 'version'";
  const body = requestJson(request);
  if (typeof body.model_id !== 'string') return "'model_id' is a required property";
  if (body.project_id !== FAKE_PROJECT && body.space_id === undefined) return 'project_id or space_id is required';
  for (const field of ['model', 'stream', 'stream_options', 'n', 'user']) if (field in body) return `Additional properties are not allowed ('${field}' was unexpected)`;
  if (typeof body.tool_choice === 'string') return "'tool_choice' must be an object; use 'tool_choice_option'";
  return undefined;
}

let sequence = 0;
/** One `id: n` / `event: message` / `data:` event, in two writes so events straddle reads. */
const event = (data: unknown): string[] => {
  sequence += 1;
  const text = `id: ${sequence}\nevent: message\ndata: ${JSON.stringify(data)}\n\n`;
  return [text.slice(0, 15), text.slice(15)];
};

const usageOf = (usage: { promptTokens: number; completionTokens: number }) => ({ completion_tokens: usage.completionTokens, prompt_tokens: usage.promptTokens, total_tokens: usage.promptTokens + usage.completionTokens });

function render(scenario: Scenario, request: ReceivedRequest, stream: boolean): RenderedAnswer {
  if (scenario.kind === 'error') return failure(scenario.status, scenario.message, scenario.retryAfter);
  const refused = refusal(request);
  if (refused) return failure(refused.startsWith('no route') ? 404 : 400, refused);
  const model = String(requestJson(request).model_id);
  const common = { id: 'chatcmpl-fake', model_id: model, model, created: 1_749_736_055, model_version: '1.0.0', created_at: '2025-06-12T13:47:35.541Z' };
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({ ...common, object: 'chat.completion.chunk', choices, ...extra });
  const opening = event(chunk([{ index: 0, finish_reason: null, delta: { role: 'assistant', content: '' } }]));
  switch (scenario.kind) {
    case 'text': {
      if (!stream) {
        const choices = [{ index: 0, message: { role: 'assistant', content: scenario.text }, finish_reason: scenario.finishReason }];
        return { status: 200, headers: JSON_TYPE, chunks: [JSON.stringify({ ...common, object: 'chat.completion', choices, usage: usageOf(scenario.usage) })] };
      }
      const pieces = splitText(scenario.text).flatMap((content) => event(chunk([{ index: 0, finish_reason: null, delta: { content } }])));
      const finish = event(chunk([{ index: 0, finish_reason: scenario.finishReason, delta: { content: '' } }]));
      return { status: 200, headers: SSE_TYPE, chunks: [...opening, ...pieces, ...finish, ...event(chunk([], { usage: usageOf(scenario.usage) }))] };
    }
    case 'toolCall': {
      const call = { id: scenario.id, type: 'function', function: { name: scenario.name, arguments: scenario.arguments } };
      if (!stream) {
        const choices = [{ index: 0, message: { role: 'assistant', tool_calls: [call] }, finish_reason: 'tool_calls' }];
        return { status: 200, headers: JSON_TYPE, chunks: [JSON.stringify({ ...common, object: 'chat.completion', choices, usage: usageOf(scenario.usage) })] };
      }
      const start = event(chunk([{ index: 0, finish_reason: null, delta: { tool_calls: [{ index: 0, id: scenario.id, type: 'function', function: { name: scenario.name, arguments: '' } }] } }]));
      const fragments = splitText(scenario.arguments).flatMap((piece) => event(chunk([{ index: 0, finish_reason: null, delta: { tool_calls: [{ index: 0, function: { name: '', arguments: piece } }] } }])));
      const finish = event(chunk([{ index: 0, finish_reason: 'tool_calls', delta: {} }]));
      return { status: 200, headers: SSE_TYPE, chunks: [...opening, ...start, ...fragments, ...finish, ...event(chunk([], { usage: usageOf(scenario.usage) }))] };
    }
    case 'truncated':
      return { status: 200, headers: SSE_TYPE, chunks: [...opening, ...event(chunk([{ index: 0, finish_reason: null, delta: { content: scenario.text } }]))] };
    default:
      return failure(500, `the fake cannot answer a ${scenario.kind} scenario`);
  }
}

/**
 * watsonx.ai, faked: `text/chat` and `text/chat_stream` with `?version=`, a project, `model_id` and
 * watsonx's field names (it refuses OpenAI's `model`, `stream`, a string `tool_choice`), answers with
 * watsonx's extra fields, streams of `event: message` ending with the usage chunk (no `[DONE]`), and
 * errors in its `{errors, trace, status_code}` envelope.
 */
export const watsonxFake: ProviderFakeRenderer = {
  classify(request) {
    const path = request.url.split('?')[0];
    if (path.endsWith('/ml/v1/text/chat_stream')) return { operation: 'chat', stream: true };
    if (path.endsWith('/ml/v1/text/chat')) return { operation: 'chat', stream: false };
    return { operation: 'other', stream: false };
  },
  render,
  checkAuth: (request, credential) => (request.headers.authorization === `Bearer ${credential}` ? [] : ['Authorization is not "Bearer <IAM access token>"']),
  roles: (request) => (requestJson(request).messages ?? []).map((message: { role: string }) => message.role),
  stopSequences(request) {
    const stop = requestJson(request).stop;
    return stop == null ? [] : Array.isArray(stop) ? stop : [stop];
  },
};
