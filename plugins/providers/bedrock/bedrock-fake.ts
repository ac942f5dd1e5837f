import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProviderFakeRenderer, type ReceivedRequest, type RenderedAnswer, type RerankScenario, requestJson, type Scenario, splitText } from '../../../core/spec/index.js';
import { verifySigV4 } from '../../shared/aws-sigv4/verify.js';
import { encodeEvent, encodeException } from './bedrock-eventstream.js';

const fixtures = join(process.cwd(), 'plugins/providers/bedrock/__fixtures__');

export const bedrockFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** A recorded ConverseStream (one frame per line: `{event, payload}` or `{exception, payload}`) as eventstream frames. */
export function bedrockStreamFrames(name: string): Buffer[] {
  return bedrockFixture(name)
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const frame = JSON.parse(line) as { event?: string; exception?: string; payload: Record<string, unknown> };
      return frame.exception ? encodeException(frame.exception, String(frame.payload.message)) : encodeEvent(frame.event!, frame.payload);
    });
}

/** SigV4 as Bedrock checks it (service `bedrock`, or `s3` for a batch's objects). */
export const checkSigV4 = (
  request: Parameters<typeof verifySigV4>[0],
  credentials: Parameters<typeof verifySigV4>[1],
  region: string,
  /** The service the request is for: `bedrock`, or `s3` for a batch's objects. */
  expectedService = 'bedrock',
): string[] => verifySigV4(request, credentials, { region, service: expectedService });

/** The cloud credentials the conformance subject sends, which the fake checks the signature with. */
export const FAKE_SECRET_ACCESS_KEY = 'conformance/Secret+Access/Key0000000000';
export const FAKE_SESSION_TOKEN = 'conformance-session-token';
export const FAKE_REGION = 'eu-west-1';

/** Each frame in two writes, so frames straddle reads. */
const split = (frames: Buffer[]): Uint8Array[] => frames.flatMap((frame) => [frame.subarray(0, Math.floor(frame.length / 2)), frame.subarray(Math.floor(frame.length / 2))]);

const usageOf = (usage: { promptTokens: number; completionTokens: number }) => ({
  inputTokens: usage.promptTokens,
  outputTokens: usage.completionTokens,
  totalTokens: usage.promptTokens + usage.completionTokens,
});

const streamHeaders = { 'content-type': 'application/vnd.amazon.eventstream' };
const jsonHeaders = { 'content-type': 'application/json' };

function render(scenario: Scenario, _request: ReceivedRequest, stream: boolean): RenderedAnswer {
  switch (scenario.kind) {
    case 'text': {
      const stopReason = scenario.finishReason === 'length' ? 'max_tokens' : 'end_turn';
      if (!stream) {
        const body = { output: { message: { role: 'assistant', content: [{ text: scenario.text }] } }, stopReason, usage: usageOf(scenario.usage), metrics: { latencyMs: 1 } };
        return { status: 200, headers: jsonHeaders, chunks: [JSON.stringify(body)] };
      }
      const frames = [
        encodeEvent('messageStart', { role: 'assistant' }),
        ...splitText(scenario.text).map((text) => encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text } })),
        encodeEvent('contentBlockStop', { contentBlockIndex: 0 }),
        encodeEvent('messageStop', { stopReason }),
        encodeEvent('metadata', { usage: usageOf(scenario.usage), metrics: { latencyMs: 1 } }),
      ];
      return { status: 200, headers: streamHeaders, chunks: split(frames) };
    }
    case 'toolCall': {
      if (!stream) {
        const content = [{ toolUse: { toolUseId: scenario.id, name: scenario.name, input: JSON.parse(scenario.arguments) } }];
        return { status: 200, headers: jsonHeaders, chunks: [JSON.stringify({ output: { message: { role: 'assistant', content } }, stopReason: 'tool_use', usage: usageOf(scenario.usage) })] };
      }
      const frames = [
        encodeEvent('messageStart', { role: 'assistant' }),
        encodeEvent('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: scenario.id, name: scenario.name } } }),
        ...splitText(scenario.arguments).map((input) => encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input } } })),
        encodeEvent('contentBlockStop', { contentBlockIndex: 0 }),
        encodeEvent('messageStop', { stopReason: 'tool_use' }),
        encodeEvent('metadata', { usage: usageOf(scenario.usage), metrics: { latencyMs: 1 } }),
      ];
      return { status: 200, headers: streamHeaders, chunks: split(frames) };
    }
    case 'embedding':
      // Titan: one vector per request, with its token count.
      return { status: 200, headers: jsonHeaders, chunks: [JSON.stringify({ embedding: scenario.vectors[0] ?? [], inputTextTokenCount: scenario.promptTokens })] };
    case 'error': {
      const errorType = scenario.status === 429 ? 'ThrottlingException' : scenario.status === 403 ? 'AccessDeniedException' : scenario.status >= 500 ? 'InternalServerException' : 'ValidationException';
      const headers: Record<string, string> = { ...jsonHeaders, 'x-amzn-errortype': `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/` };
      if (scenario.retryAfter) headers['retry-after'] = scenario.retryAfter;
      return { status: scenario.status, headers, chunks: [JSON.stringify({ message: scenario.message })] };
    }
    case 'truncated':
      return {
        status: 200,
        headers: streamHeaders,
        chunks: split([encodeEvent('messageStart', { role: 'assistant' }), encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: scenario.text } })]),
      };
  }
}

/**
 * The Agents runtime's Rerank: it checks the request's shape (one TEXT query, INLINE TEXT sources, a
 * foundation-model ARN), answers `relevanceScore`s in the sources' order (the real API answers best
 * first; the order is the gateway's to fix either way) and reports no usage in the body.
 */
function renderRerank(scenario: RerankScenario, request: ReceivedRequest): RenderedAnswer {
  const body = requestJson(request);
  const configuration = body.rerankingConfiguration?.bedrockRerankingConfiguration;
  const problems = [
    body.queries?.length === 1 && body.queries[0].type === 'TEXT' && typeof body.queries[0].textQuery?.text === 'string' ? undefined : 'queries',
    Array.isArray(body.sources) && body.sources.length === scenario.scores.length && body.sources.every((source: any) => source.type === 'INLINE' && source.inlineDocumentSource?.type === 'TEXT' && typeof source.inlineDocumentSource.textDocument?.text === 'string')
      ? undefined
      : 'sources',
    body.rerankingConfiguration?.type === 'BEDROCK_RERANKING_MODEL' && /^arn:aws:bedrock:[a-z0-9-]+::foundation-model\/.+/.test(configuration?.modelConfiguration?.modelArn ?? '') ? undefined : 'rerankingConfiguration',
  ].filter(Boolean);
  if (problems.length > 0) {
    return { status: 400, headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException' }, chunks: [JSON.stringify({ message: `Invalid ${problems.join(', ')}` })] };
  }
  const results = scenario.scores.map((relevanceScore, index) => ({ index, relevanceScore }));
  return { status: 200, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ results })] };
}

export const bedrockFake: ProviderFakeRenderer = {
  classify(request) {
    const path = request.url.split('?')[0];
    if (path.endsWith('/converse-stream')) return { operation: 'chat', stream: true };
    if (path.endsWith('/converse')) return { operation: 'chat', stream: false };
    if (path.endsWith('/invoke')) return { operation: 'embed', stream: false };
    if (path.endsWith('/rerank')) return { operation: 'rerank', stream: false };
    return { operation: 'other', stream: false };
  },
  render,
  renderRerank,
  checkAuth: (request, credential) => checkSigV4(request, { accessKeyId: credential, secretAccessKey: FAKE_SECRET_ACCESS_KEY, sessionToken: FAKE_SESSION_TOKEN }, FAKE_REGION),
  roles(request) {
    const body = requestJson(request);
    const roles: string[] = (body.system ?? []).map(() => 'system');
    for (const message of body.messages ?? []) {
      if (message.role === 'assistant') {
        roles.push('assistant');
        continue;
      }
      const blocks: Array<Record<string, unknown>> = message.content ?? [];
      for (const block of blocks) if (block.toolResult) roles.push('tool');
      if (blocks.some((block) => !block.toolResult)) roles.push('user');
    }
    return roles;
  },
  stopSequences: (request) => requestJson(request).inferenceConfig?.stopSequences ?? [],
};

/** The Bedrock plugin for the conformance kit: SigV4 with a session token, Titan embeddings. */
