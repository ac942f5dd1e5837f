import { type ProviderFakeRenderer, type RenderedAnswer, requestJson, type Scenario, splitText } from '../../../core/spec/index.js';

/** Error `type` Anthropic documents per HTTP status. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const json = (value: unknown): string => JSON.stringify(value);
const sse = (value: { type: string; [field: string]: unknown }): string => `event: ${value.type}\ndata: ${json(value)}\n\n`;
function message(id: string, model: string, content: unknown[], stopReason: string, usage: { promptTokens: number; completionTokens: number }) {
  return { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens } };
}

/** Anthropic Messages API answers (JSON or the SSE event stream) for the conformance scenarios. */
export function renderAnthropic(scenario: Scenario, model: string, stream: boolean): RenderedAnswer {
  const id = 'msg_conformance0001';
  if (scenario.kind === 'error') {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (scenario.retryAfter) headers['retry-after'] = scenario.retryAfter;
    return { status: scenario.status, headers, chunks: [json({ type: 'error', error: { type: ERROR_TYPES[scenario.status] ?? 'api_error', message: scenario.message } })] };
  }
  if (scenario.kind === 'embedding') {
    return { status: 404, headers: { 'content-type': 'application/json' }, chunks: [json({ type: 'error', error: { type: 'not_found_error', message: 'Not found' } })] };
  }
  const start = { type: 'message_start', message: { ...message(id, model, [], '', { promptTokens: 0, completionTokens: 0 }), stop_reason: null } };
  if (scenario.kind === 'truncated') {
    if (!stream) return { status: 200, headers: { 'content-type': 'application/json' }, chunks: [json(message(id, model, [{ type: 'text', text: scenario.text }], 'end_turn', { promptTokens: 1, completionTokens: 1 })).slice(0, 40)] };
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      chunks: [sse(start), sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }), ...splitText(scenario.text, 3).map((text) => sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }))],
    };
  }
  const usage = scenario.usage;
  if (!stream) {
    const content =
      scenario.kind === 'text'
        ? [{ type: 'text', text: scenario.text }]
        : [{ type: 'tool_use', id: scenario.id, name: scenario.name, input: JSON.parse(scenario.arguments) }];
    const stop = scenario.kind === 'text' ? (scenario.finishReason === 'length' ? 'max_tokens' : 'end_turn') : 'tool_use';
    return { status: 200, headers: { 'content-type': 'application/json' }, chunks: [json(message(id, model, content, stop, usage))] };
  }
  const startWithUsage = { type: 'message_start', message: { ...start.message, usage: { input_tokens: usage.promptTokens, output_tokens: 1 } } };
  const events: string[] = [sse(startWithUsage), sse({ type: 'ping' })];
  if (scenario.kind === 'text') {
    events.push(sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
    for (const text of splitText(scenario.text, 3)) events.push(sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }));
  } else {
    events.push(sse({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: scenario.id, name: scenario.name, input: {} } }));
    for (const partial of splitText(scenario.arguments, 3)) events.push(sse({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: partial } }));
  }
  const stop = scenario.kind === 'text' ? (scenario.finishReason === 'length' ? 'max_tokens' : 'end_turn') : 'tool_use';
  events.push(sse({ type: 'content_block_stop', index: 0 }));
  events.push(sse({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.completionTokens } }));
  events.push(sse({ type: 'message_stop' }));
  // Split one event across two writes so framing is exercised.
  const last = events.pop()!;
  return { status: 200, headers: { 'content-type': 'text/event-stream' }, chunks: [...events, last.slice(0, 7), last.slice(7)] };
}

/** The unified roles of an Anthropic body: system blocks, then turns (tool results read as `tool`). */
export function anthropicRoles(body: Record<string, any>): string[] {
  const roles: string[] = [];
  for (const _block of Array.isArray(body.system) ? body.system : body.system ? [body.system] : []) roles.push('system');
  for (const turn of body.messages ?? []) {
    if (turn.role === 'assistant') {
      roles.push('assistant');
      continue;
    }
    const blocks = Array.isArray(turn.content) ? turn.content : [{ type: 'text' }];
    for (const block of blocks) if (block.type === 'tool_result') roles.push('tool');
    if (blocks.some((block: { type: string }) => block.type !== 'tool_result')) roles.push('user');
  }
  return roles;
}

export const anthropicFakeRenderer: ProviderFakeRenderer = {
  classify(request) {
    const chat = request.method === 'POST' && /\/messages(\?|$)/.test(request.url);
    return { operation: chat ? 'chat' : 'other', stream: chat && requestJson(request).stream === true };
  },
  render: (scenario, request, stream) => renderAnthropic(scenario, String(requestJson(request).model ?? 'claude'), stream),
  checkAuth(request, credential) {
    const problems: string[] = [];
    if (request.headers['x-api-key'] !== credential) problems.push('x-api-key does not carry the credential');
    if (!request.headers['anthropic-version']) problems.push('anthropic-version header missing');
    if (request.headers.authorization) problems.push('an Authorization header was sent to Anthropic');
    return problems;
  },
  roles: (request) => anthropicRoles(requestJson(request)),
  stopSequences: (request) => requestJson(request).stop_sequences ?? [],
};
