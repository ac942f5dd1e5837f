import {
  type ConformanceSubject,
  multipartParts,
  type ProviderFakeRenderer,
  type ReceivedRequest,
  type RenderedAnswer,
  type RerankScenario,
  type Scenario,
  type ImageScenario,
  type SpeechScenario,
  type TranscriptionScenario,
} from '../../../core/spec/index.js';
import type { CompatibleProviderManifest } from './compatible-manifest.js';
import type { ProviderRegistration } from '../../../core/spec/index.js';

/** How the fake server writes errors: OpenAI's envelope, a top-level object (vLLM, Mistral) or FastAPI's `detail`. */
export type FakeErrorShape = 'openai' | 'top-level' | 'detail';

export interface CompatibleFakeOptions {
  readonly errorShape?: FakeErrorShape;
  /** Embedding usage reports only `total_tokens`. */
  readonly embedUsageTotalOnly?: boolean;
}

const SSE = { 'content-type': 'text/event-stream' };
const JSON_TYPE = { 'content-type': 'application/json' };
const event = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
/** The fields of a received body the fake reads; the rest is carried as unknown. */
interface FakeBody {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  messages?: Array<{ role: string; name?: string }>;
  stop?: string | string[] | null;
  n?: number;
  max_tokens?: number | null;
  encoding_format?: string;
  [field: string]: unknown;
}
const parse = (request: ReceivedRequest): FakeBody => (request.body.length ? (JSON.parse(request.body.toString('utf8')) as FakeBody) : {});

const openAIError = (status: number, message: string, param: string | null = null): RenderedAnswer => ({
  status,
  headers: JSON_TYPE,
  chunks: [JSON.stringify({ error: { message, type: 'invalid_request_error', param, code: null } })],
});

/** OpenAI's `POST /images/generations`, faked: a JSON body with a prompt; the image as `b64_json` when asked, else refused (no URLs here). */
export function renderOpenAIImage(scenario: ImageScenario, request: ReceivedRequest): RenderedAnswer {
  const body = parse(request);
  if (typeof body.prompt !== 'string' || body.prompt === '') return openAIError(400, 'prompt is required', 'prompt');
  if (body.response_format !== 'b64_json') return openAIError(400, 'the fake answers only response_format b64_json', 'response_format');
  return { status: 200, headers: JSON_TYPE, chunks: [JSON.stringify({ created: 1_700_000_000, data: [{ b64_json: Buffer.from(scenario.png).toString('base64') }] })] };
}

/** OpenAI's `POST /audio/speech`, faked: a JSON body with model, input and voice; the audio answered in two writes. */
export function renderOpenAISpeech(scenario: SpeechScenario, request: ReceivedRequest): RenderedAnswer {
  const body = parse(request);
  for (const field of ['model', 'input', 'voice']) if (typeof body[field] !== 'string' || body[field] === '') return openAIError(400, `${field} is required`, field);
  const audio = Buffer.from(scenario.audio);
  return { status: 200, headers: { 'content-type': 'audio/mpeg' }, chunks: [audio.subarray(0, 3), audio.subarray(3)] };
}

/**
 * OpenAI's `POST /audio/transcriptions`, faked: a multipart form with a `file` and a `model`; the
 * transcript as the form's `response_format` asks (json by default, with whisper's duration usage).
 */
export function renderOpenAITranscription(scenario: TranscriptionScenario, request: ReceivedRequest): RenderedAnswer {
  const parts = multipartParts(request);
  const field = (name: string) => parts.find((part) => part.name === name && part.filename === undefined)?.bytes.toString('utf8');
  const file = parts.find((part) => part.name === 'file' && part.filename !== undefined);
  if (!file || file.bytes.length === 0) return openAIError(400, 'file is required', 'file');
  if (!field('model')) return openAIError(400, 'model is required', 'model');
  const format = field('response_format') ?? 'json';
  if (format === 'text') return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, chunks: [`${scenario.text}\n`] };
  if (format !== 'json' && format !== 'verbose_json') return openAIError(400, `response_format ${format} is not faked`, 'response_format');
  const answer = { text: scenario.text, usage: { type: 'duration', seconds: scenario.seconds } };
  return { status: 200, headers: JSON_TYPE, chunks: [JSON.stringify(format === 'json' ? answer : { task: 'transcribe', language: 'english', duration: scenario.seconds, ...answer, segments: [] })] };
}

/** Splits text into pieces of at most `size` characters (at least two pieces for any text of two or more). */
export function pieces(text: string, size = 4): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < text.length; offset += size) out.push(text.slice(offset, offset + size));
  return out.length ? out : [''];
}

/**
 * A fake of an OpenAI-compatible API that behaves as the manifest says the real one does: it puts
 * stream usage where the provider does, refuses fields the provider refuses (so a plugin that
 * forgets a quirk fails), and writes errors in the provider's shape.
 */
export function compatibleFake(manifest: CompatibleProviderManifest, options: CompatibleFakeOptions = {}): ProviderFakeRenderer {
  const quirks = manifest.chat ?? {};
  const chatPath = manifest.paths?.chat ?? '/chat/completions';
  const embedPath = manifest.paths?.embed ?? '/embeddings';
  const rerankPath = manifest.paths?.rerank ?? '/rerank';
  const usageAlways = quirks.streamUsage === 'always';

  const errorBody = (status: number, message: string): string => {
    const type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
    if (options.errorShape === 'detail') return JSON.stringify({ detail: message });
    if (options.errorShape === 'top-level') return JSON.stringify({ object: 'error', message, type, param: null, code: status });
    return JSON.stringify({ error: { message, type, param: null, code: null } });
  };
  const refuse = (message: string): RenderedAnswer => ({ status: 400, headers: JSON_TYPE, chunks: [errorBody(400, message)] });

  /** What the real provider would refuse in this body. */
  const refusal = (body: FakeBody): string | undefined => {
    for (const field of quirks.unsupportedFields ?? []) if (field in body) return `${field} is not supported`;
    for (const field of Object.keys(quirks.renamedFields ?? {})) if (field in body) return `Extra inputs are not permitted: ${field}`;
    if (usageAlways && 'stream_options' in body) return 'Extra inputs are not permitted: stream_options';
    if (quirks.maxTokensDefault !== undefined && body.max_tokens == null) return 'max_tokens is required';
    if (quirks.maxTokensOnly && 'max_completion_tokens' in body) return 'Extra inputs are not permitted: max_completion_tokens';
    if (quirks.noMessageNames && Array.isArray(body.messages) && body.messages.some((message) => 'name' in message)) return "'messages.name' is not supported";
    if (quirks.n === false && typeof body.n === 'number' && body.n > 1) return 'n must be 1';
    return undefined;
  };

  const usageOf = (usage: { promptTokens: number; completionTokens: number }) => ({
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  });

  const chunk = (body: FakeBody, choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: body.model,
    choices,
    ...extra,
  });

  /** The last chunk(s) of a stream: finish reason, usage where this provider puts it, and `[DONE]`. */
  const streamEnd = (body: FakeBody, finishReason: string, usage: ReturnType<typeof usageOf>): string[] => {
    const finish = [{ index: 0, delta: {}, finish_reason: finishReason }];
    if (quirks.streamUsageField) {
      const [head, ...rest] = quirks.streamUsageField.split('.');
      const nested = rest.reduceRight<unknown>((inner, key) => ({ [key]: inner }), usage);
      return [event(chunk(body, finish, { [head]: nested })), 'data: [DONE]\n\n'];
    }
    if (usageAlways) return [event(chunk(body, finish, { usage })), 'data: [DONE]\n\n'];
    const out = [event(chunk(body, finish))];
    if (body.stream_options?.include_usage === true) out.push(event(chunk(body, [], { usage })));
    return [...out, 'data: [DONE]\n\n'];
  };

  const renderChat = (scenario: Scenario, body: FakeBody, stream: boolean): RenderedAnswer => {
    if (scenario.kind === 'text') {
      const count = scenario.choices ?? 1;
      const textOf = (index: number) => (count > 1 ? `${scenario.text} ${index}` : scenario.text);
      if (!stream) {
        const choices = Array.from({ length: count }, (_, index) => ({
          index,
          message: { role: 'assistant', content: textOf(index) },
          logprobs: null,
          finish_reason: scenario.finishReason,
        }));
        const answer = { id: 'chatcmpl-fake', object: 'chat.completion', created: 1_700_000_000, model: body.model, choices, usage: usageOf(scenario.usage) };
        return { status: 200, headers: JSON_TYPE, chunks: [JSON.stringify(answer)] };
      }
      const chunks = [event(chunk(body, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]))];
      for (const piece of pieces(scenario.text)) chunks.push(event(chunk(body, [{ index: 0, delta: { content: piece }, finish_reason: null }])));
      return { status: 200, headers: SSE, chunks: [...chunks, ...streamEnd(body, scenario.finishReason, usageOf(scenario.usage))] };
    }
    if (scenario.kind === 'toolCall') {
      if (!stream) {
        const message = { role: 'assistant', content: null, tool_calls: [{ id: scenario.id, type: 'function', function: { name: scenario.name, arguments: scenario.arguments } }] };
        const answer = {
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: body.model,
          choices: [{ index: 0, message, logprobs: null, finish_reason: 'tool_calls' }],
          usage: usageOf(scenario.usage),
        };
        return { status: 200, headers: JSON_TYPE, chunks: [JSON.stringify(answer)] };
      }
      const first = { index: 0, id: scenario.id, type: 'function', function: { name: scenario.name, arguments: '' } };
      const chunks = [event(chunk(body, [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [first] }, finish_reason: null }]))];
      for (const fragment of pieces(scenario.arguments, 5)) {
        chunks.push(event(chunk(body, [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: fragment } }] }, finish_reason: null }])));
      }
      return { status: 200, headers: SSE, chunks: [...chunks, ...streamEnd(body, 'tool_calls', usageOf(scenario.usage))] };
    }
    if (scenario.kind === 'truncated') {
      const chunks = [event(chunk(body, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]))];
      for (const piece of pieces(scenario.text)) chunks.push(event(chunk(body, [{ index: 0, delta: { content: piece }, finish_reason: null }])));
      return { status: 200, headers: SSE, chunks };
    }
    return { status: 500, headers: JSON_TYPE, chunks: [errorBody(500, `the fake cannot answer a chat request with a ${scenario.kind} scenario`)] };
  };

  const renderEmbed = (scenario: Scenario, body: FakeBody): RenderedAnswer => {
    if (scenario.kind !== 'embedding') return { status: 500, headers: JSON_TYPE, chunks: [errorBody(500, 'not an embedding scenario')] };
    const usage = options.embedUsageTotalOnly ? { total_tokens: scenario.promptTokens } : { prompt_tokens: scenario.promptTokens, total_tokens: scenario.promptTokens };
    const answer = { object: 'list', data: scenario.vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })), model: body.model, usage };
    return { status: 200, headers: JSON_TYPE, chunks: [JSON.stringify(answer)] };
  };

  /** A Jina-style rerank answer (results in the documents' order), or the refusal of a field the provider names otherwise. */
  const renderRerank = (scenario: RerankScenario, body: FakeBody): RenderedAnswer => {
    for (const field of Object.keys(manifest.rerank?.renamedFields ?? {})) if (field in body) return refuse(`Extra inputs are not permitted: ${field}`);
    const documentsField = manifest.rerank?.renamedFields?.documents ?? 'documents';
    const documents = body[documentsField];
    if (!Array.isArray(documents) || !documents.every((document) => typeof document === 'string')) return refuse(`${documentsField} must be a list of strings`);
    if (documents.length !== scenario.scores.length) return refuse(`expected ${scenario.scores.length} documents, got ${documents.length}`);
    const scoreField = manifest.rerank?.scoreField ?? 'relevance_score';
    const results = scenario.scores.map((score, index) => ({ index, [scoreField]: score, document: { text: documents[index] } }));
    const answer = { id: 'rerank-fake', model: body.model, [manifest.rerank?.resultsField ?? 'results']: results, usage: { total_tokens: scenario.tokens } };
    return { status: 200, headers: JSON_TYPE, chunks: [JSON.stringify(answer)] };
  };

  return {
    classify(request) {
      const path = request.url.split('?')[0];
      if (path.endsWith(chatPath)) return { operation: 'chat', stream: request.method === 'POST' && parse(request).stream === true };
      if (path.endsWith(embedPath)) return { operation: 'embed', stream: false };
      if (manifest.operations.includes('rerank') && path.endsWith(rerankPath)) return { operation: 'rerank', stream: false };
      if (path.endsWith('/images/generations')) return { operation: 'image', stream: false };
      if (path.endsWith('/audio/speech')) return { operation: 'speech', stream: false };
      if (path.endsWith('/audio/transcriptions')) return { operation: 'transcription', stream: false };
      return { operation: 'other', stream: false };
    },

    render(scenario, request, stream) {
      if (scenario.kind === 'error') {
        const headers: Record<string, string> = { ...JSON_TYPE };
        if (scenario.retryAfter !== undefined) headers['retry-after'] = scenario.retryAfter;
        return { status: scenario.status, headers, chunks: [errorBody(scenario.status, scenario.message)] };
      }
      const body = parse(request);
      const path = request.url.split('?')[0];
      if (path.endsWith(embedPath)) {
        if (manifest.embed?.dropFloatEncoding && body.encoding_format === 'float') return refuse("encoding_format must be null or 'base64'");
        for (const field of Object.keys(manifest.embed?.renamedFields ?? {})) if (field in body) return refuse(`Extra inputs are not permitted: ${field}`);
        return renderEmbed(scenario, body);
      }
      const refused = refusal(body);
      if (refused) return refuse(refused);
      return renderChat(scenario, body, stream);
    },

    renderRerank: manifest.operations.includes('rerank') ? (scenario, request) => renderRerank(scenario, parse(request)) : undefined,
    // OpenAI's image and audio endpoints: only a plugin declaring them is sent these scenarios.
    renderImage: renderOpenAIImage,
    renderSpeech: renderOpenAISpeech,
    renderTranscription: renderOpenAITranscription,

    checkAuth(request, credential) {
      const problems: string[] = [];
      const auth = manifest.auth;
      const authorization = request.headers.authorization;
      if (auth.kind === 'bearer') {
        if (authorization !== `Bearer ${credential}`) problems.push(`expected "authorization: Bearer <key>", got ${authorization === undefined ? 'none' : JSON.stringify(authorization.replace(credential, '<key>'))}`);
      } else {
        const name = auth.header.toLowerCase();
        const value = request.headers[name];
        if (value !== `${auth.prefix ?? ''}${credential}`) problems.push(`expected "${name}: ${auth.prefix ?? ''}<key>", got ${value === undefined ? 'none' : 'another value'}`);
        if (authorization?.includes(credential)) problems.push('the key must not also travel in authorization');
      }
      for (const [name, value] of Object.entries(manifest.headers ?? {})) {
        if (request.headers[name.toLowerCase()] !== value) problems.push(`expected header "${name.toLowerCase()}: ${value}"`);
      }
      return problems;
    },

    roles: (request) => (parse(request).messages ?? []).map((message) => message.role),

    stopSequences(request) {
      const stop = parse(request).stop;
      return stop == null ? [] : Array.isArray(stop) ? stop : [stop];
    },
  };
}

/** The conformance subject of a compatible provider: its plugin and the fake above. */
export function compatibleSubject(
  factory: () => ProviderRegistration,
  manifest: CompatibleProviderManifest,
  extra: { model: string; embeddingModel?: string; rerankModel?: string; fake?: CompatibleFakeOptions },
): ConformanceSubject {
  const developerRole = manifest.chat?.developerRole;
  return {
    registration: factory(),
    fake: compatibleFake(manifest, extra.fake),
    model: extra.model,
    embeddingModel: extra.embeddingModel,
    rerankModel: extra.rerankModel,
    supportsN: manifest.chat?.n !== false,
    supportsTools: !manifest.chat?.unsupportedFields?.includes('tools'),
    developerRole: typeof developerRole === 'function' ? developerRole(extra.model) : (developerRole ?? false),
  };
}
