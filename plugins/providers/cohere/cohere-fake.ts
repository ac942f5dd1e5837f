import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProviderFakeRenderer, type ReceivedRequest, type RenderedAnswer, type RerankScenario, requestJson, type Scenario, splitText } from '../../../core/spec/index.js';

const fixtures = join(process.cwd(), 'plugins/providers/cohere/__fixtures__');

export const cohereFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** The stream's lines (one event's JSON each). */
export const cohereStreamLines = (name: string): string[] => cohereFixture(name).split('\n').filter(Boolean);

/** A recorded stream as Cohere sends it: `event: <type>` and `data: <json>` per event. */
export const cohereStreamEvents = (name: string): string[] =>
  cohereStreamLines(name).map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`);

const usageOf = (usage: { promptTokens: number; completionTokens: number }) => ({
  billed_units: { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens },
  tokens: { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens },
});

/** An SSE event as Cohere sends it, in two writes so events straddle reads. */
const event = (data: { type: string } & Record<string, unknown>): string[] => {
  const text = `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  return [text.slice(0, 20), text.slice(20)];
};

const start = (id: string) => event({ id, type: 'message-start', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } });

function render(scenario: Scenario, _request: ReceivedRequest, stream: boolean): RenderedAnswer {
  const sseHeaders = { 'content-type': 'text/event-stream' };
  const jsonHeaders = { 'content-type': 'application/json' };
  switch (scenario.kind) {
    case 'text': {
      const finish = scenario.finishReason === 'length' ? 'MAX_TOKENS' : 'COMPLETE';
      if (!stream) {
        const body = { id: 'conf-text', finish_reason: finish, message: { role: 'assistant', content: [{ type: 'text', text: scenario.text }] }, usage: usageOf(scenario.usage) };
        return { status: 200, headers: jsonHeaders, chunks: [JSON.stringify(body)] };
      }
      return {
        status: 200,
        headers: sseHeaders,
        chunks: [
          ...start('conf-text'),
          ...event({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } }),
          ...splitText(scenario.text).flatMap((text) => event({ type: 'content-delta', index: 0, delta: { message: { content: { text } } } })),
          ...event({ type: 'content-end', index: 0 }),
          ...event({ type: 'message-end', delta: { finish_reason: finish, usage: usageOf(scenario.usage) } }),
        ],
      };
    }
    case 'toolCall': {
      if (!stream) {
        const message = { role: 'assistant', tool_plan: 'I will call the tool.', tool_calls: [{ id: scenario.id, type: 'function', function: { name: scenario.name, arguments: scenario.arguments } }] };
        return { status: 200, headers: jsonHeaders, chunks: [JSON.stringify({ id: 'conf-tool', finish_reason: 'TOOL_CALL', message, usage: usageOf(scenario.usage) })] };
      }
      return {
        status: 200,
        headers: sseHeaders,
        chunks: [
          ...start('conf-tool'),
          ...event({ type: 'tool-plan-delta', delta: { message: { tool_plan: 'I will call the tool.' } } }),
          ...event({ type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { id: scenario.id, type: 'function', function: { name: scenario.name, arguments: '' } } } } }),
          ...splitText(scenario.arguments).flatMap((fragment) => event({ type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: fragment } } } } })),
          ...event({ type: 'tool-call-end', index: 0 }),
          ...event({ type: 'message-end', delta: { finish_reason: 'TOOL_CALL', usage: usageOf(scenario.usage) } }),
        ],
      };
    }
    case 'embedding':
      return {
        status: 200,
        headers: jsonHeaders,
        chunks: [JSON.stringify({ id: 'conf-embed', embeddings: { float: scenario.vectors }, texts: [], meta: { billed_units: { input_tokens: scenario.promptTokens } }, response_type: 'embeddings_by_type' })],
      };
    case 'error': {
      const headers: Record<string, string> = { ...jsonHeaders };
      if (scenario.retryAfter) headers['retry-after'] = scenario.retryAfter;
      return { status: scenario.status, headers, chunks: [JSON.stringify({ id: 'conf-error', message: scenario.message })] };
    }
    case 'truncated':
      return { status: 200, headers: sseHeaders, chunks: [...start('conf-cut'), ...event({ type: 'content-delta', index: 0, delta: { message: { content: { text: scenario.text } } } })] };
  }
}

/** Rerank v2: results with index and score only (v2 never echoes documents), billed in search units. */
function renderRerank(scenario: RerankScenario, request: ReceivedRequest): RenderedAnswer {
  const documents = requestJson(request).documents;
  if (!Array.isArray(documents) || documents.some((document: unknown) => typeof document !== 'string') || 'return_documents' in requestJson(request)) {
    return { status: 400, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ id: 'conf-error', message: 'invalid request: documents must be strings; return_documents is not a v2 field' })] };
  }
  const results = scenario.scores.map((relevance_score, index) => ({ index, relevance_score }));
  const meta = { api_version: { version: '2', is_experimental: false }, billed_units: { search_units: scenario.searchUnits } };
  return { status: 200, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ id: 'conf-rerank', results, meta })] };
}

export const cohereFake: ProviderFakeRenderer = {
  classify(request) {
    const path = request.url.split('?')[0];
    if (path.endsWith('/chat')) return { operation: 'chat', stream: requestJson(request).stream === true };
    if (path.endsWith('/embed')) return { operation: 'embed', stream: false };
    if (path.endsWith('/rerank')) return { operation: 'rerank', stream: false };
    return { operation: 'other', stream: false };
  },
  render,
  renderRerank,
  checkAuth: (request, credential) => (request.headers.authorization === `Bearer ${credential}` ? [] : ['Authorization is not "Bearer <credential>"']),
  roles: (request) => (requestJson(request).messages ?? []).map((message: { role: string }) => message.role),
  stopSequences: (request) => requestJson(request).stop_sequences ?? [],
};

/** The Cohere plugin for the conformance kit. */
