import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProviderFakeRenderer, type ReceivedRequest, type RenderedAnswer, requestJson, type Scenario, splitText } from '../../../core/spec/index.js';
import { renderOpenAIImage, renderOpenAISpeech, renderOpenAITranscription } from '../openai-compatible/openai-compatible-fake.js';

const fixtures = join(process.cwd(), 'plugins/providers/azure-openai/__fixtures__');

export const azureFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** A recorded Azure stream (one `data:` payload per line) as SSE events. */
export const azureStreamEvents = (name: string): string[] =>
  azureFixture(name)
    .split('\n')
    .filter(Boolean)
    .map((line) => `data: ${line}\n\n`);

const MODEL = 'gpt-4o-2024-08-06';
const PROMPT_FILTER = [{ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }];

const usageOf = (usage: { promptTokens: number; completionTokens: number }) => ({
  prompt_tokens: usage.promptTokens,
  completion_tokens: usage.completionTokens,
  total_tokens: usage.promptTokens + usage.completionTokens,
});

const sse = (value: unknown) => `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`;

function streamOf(id: string, choices: Array<Record<string, unknown>>, usage: ReturnType<typeof usageOf>, includeUsage: boolean): string[] {
  const chunk = (choiceList: unknown[], extra: Record<string, unknown> = {}) => ({ id, object: 'chat.completion.chunk', created: 1731000000, model: MODEL, choices: choiceList, usage: null, ...extra });
  const events = [sse({ id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: PROMPT_FILTER }), ...choices.map((choice) => sse(chunk([choice])))];
  if (includeUsage) events.push(sse(chunk([], { usage })));
  return [...events, sse('[DONE]')];
}

function render(scenario: Scenario, request: ReceivedRequest, stream: boolean): RenderedAnswer {
  const body = requestJson(request);
  const includeUsage = body.stream_options?.include_usage === true;
  const sseHeaders = { 'content-type': 'text/event-stream' };
  const jsonHeaders = { 'content-type': 'application/json' };
  switch (scenario.kind) {
    case 'text': {
      const count = scenario.choices ?? 1;
      const texts = Array.from({ length: count }, (_, index) => (count > 1 ? `${scenario.text}${index}` : scenario.text));
      if (!stream) {
        const choices = texts.map((text, index) => ({ index, finish_reason: scenario.finishReason, logprobs: null, message: { role: 'assistant', content: text }, content_filter_results: {} }));
        return { status: 200, headers: jsonHeaders, chunks: [JSON.stringify({ id: 'chatcmpl-conf', object: 'chat.completion', created: 1731000000, model: MODEL, prompt_filter_results: PROMPT_FILTER, choices, usage: usageOf(scenario.usage) })] };
      }
      const choices = texts.flatMap((text, index) => [
        { index, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null },
        ...splitText(text).map((content) => ({ index, delta: { content }, finish_reason: null, logprobs: null, content_filter_results: {} })),
        { index, delta: {}, finish_reason: scenario.finishReason, logprobs: null },
      ]);
      return { status: 200, headers: sseHeaders, chunks: streamOf('chatcmpl-conf', choices, usageOf(scenario.usage), includeUsage) };
    }
    case 'toolCall': {
      if (!stream) {
        const message = { role: 'assistant', content: null, tool_calls: [{ id: scenario.id, type: 'function', function: { name: scenario.name, arguments: scenario.arguments } }] };
        return { status: 200, headers: jsonHeaders, chunks: [JSON.stringify({ id: 'chatcmpl-conf', object: 'chat.completion', created: 1731000000, model: MODEL, choices: [{ index: 0, finish_reason: 'tool_calls', logprobs: null, message }], usage: usageOf(scenario.usage) })] };
      }
      const fragments = splitText(scenario.arguments);
      const choices = [
        { index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: scenario.id, type: 'function', function: { name: scenario.name, arguments: '' } }] }, finish_reason: null, logprobs: null },
        ...fragments.map((fragment) => ({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: fragment } }] }, finish_reason: null, logprobs: null })),
        { index: 0, delta: {}, finish_reason: 'tool_calls', logprobs: null },
      ];
      return { status: 200, headers: sseHeaders, chunks: streamOf('chatcmpl-conf', choices, usageOf(scenario.usage), includeUsage) };
    }
    case 'embedding':
      return {
        status: 200,
        headers: jsonHeaders,
        chunks: [JSON.stringify({ object: 'list', data: scenario.vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })), model: 'text-embedding-3-small', usage: { prompt_tokens: scenario.promptTokens, total_tokens: scenario.promptTokens } })],
      };
    case 'error': {
      const headers: Record<string, string> = { ...jsonHeaders };
      if (scenario.retryAfter) headers['retry-after'] = scenario.retryAfter;
      const code = scenario.status === 429 ? '429' : scenario.status === 404 ? 'DeploymentNotFound' : scenario.status === 401 ? '401' : 'BadRequest';
      return { status: scenario.status, headers, chunks: [JSON.stringify({ error: { code, message: scenario.message } })] };
    }
    case 'truncated':
      return {
        status: 200,
        headers: sseHeaders,
        chunks: [sse({ id: 'chatcmpl-conf', object: 'chat.completion.chunk', created: 1731000000, model: MODEL, choices: [{ index: 0, delta: { role: 'assistant', content: scenario.text }, finish_reason: null }] })],
      };
  }
}

export const azureOpenAIFake: ProviderFakeRenderer = {
  classify(request) {
    const path = request.url.split('?')[0];
    if (path.endsWith('/chat/completions')) return { operation: 'chat', stream: requestJson(request).stream === true };
    if (path.endsWith('/embeddings')) return { operation: 'embed', stream: false };
    if (path.endsWith('/images/generations')) return { operation: 'image', stream: false };
    if (path.endsWith('/audio/speech')) return { operation: 'speech', stream: false };
    if (path.endsWith('/audio/transcriptions')) return { operation: 'transcription', stream: false };
    return { operation: 'other', stream: false };
  },
  render,
  // A deployment's image and audio endpoints take OpenAI's bodies and answer OpenAI's shapes.
  renderImage: renderOpenAIImage,
  renderSpeech: renderOpenAISpeech,
  renderTranscription: renderOpenAITranscription,
  checkAuth(request, credential) {
    const problems: string[] = [];
    if (request.headers['api-key'] !== credential) problems.push('the api-key header does not carry the credential');
    if (request.headers.authorization !== undefined) problems.push('an Authorization header was sent with an API key');
    if (!/[?&]api-version=\d{4}-\d{2}-\d{2}/.test(request.url)) problems.push('no api-version query parameter');
    if (!request.url.includes('/deployments/conformance-deployment/')) problems.push('the deployment is not in the path');
    return problems;
  },
  roles: (request) => (requestJson(request).messages ?? []).map((message: { role: string }) => message.role),
  stopSequences(request) {
    const stop = requestJson(request).stop;
    return typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop : [];
  },
};

/** The Azure OpenAI plugin for the conformance kit (api-key auth, a named deployment). */
