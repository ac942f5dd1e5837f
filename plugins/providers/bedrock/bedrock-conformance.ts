import type { ConformanceSubject, ProviderFakeRenderer, ReceivedRequest, RenderedAnswer, Scenario } from '../../../test/conformance/subject.js';
import { requestJson, splitText } from '../../../test/conformance/render-helpers.js';
import { checkSigV4 } from '../../../test/fakes/bedrock-fake.js';
import { encodeEvent } from './bedrock-eventstream.js';
import { bedrock } from './index.js';

const SECRET = 'conformance/Secret+Access/Key0000000000';
const SESSION = 'conformance-session-token';
const REGION = 'eu-west-1';

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

export const bedrockFake: ProviderFakeRenderer = {
  classify(request) {
    const path = request.url.split('?')[0];
    if (path.endsWith('/converse-stream')) return { operation: 'chat', stream: true };
    if (path.endsWith('/converse')) return { operation: 'chat', stream: false };
    if (path.endsWith('/invoke')) return { operation: 'embed', stream: false };
    return { operation: 'other', stream: false };
  },
  render,
  checkAuth: (request, credential) => checkSigV4(request, { accessKeyId: credential, secretAccessKey: SECRET, sessionToken: SESSION }, REGION),
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
export const bedrockConformance: ConformanceSubject = {
  registration: bedrock(),
  fake: bedrockFake,
  model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
  embeddingModel: 'amazon.titan-embed-text-v2:0',
  // Titan embeds one text per request.
  maxEmbeddingInputs: 1,
  headers: {
    'x-gateway-cloud-c-secret-access-key': SECRET,
    'x-gateway-cloud-c-session-token': SESSION,
    'x-gateway-cloud-c-region': REGION,
  },
  supportsN: false,
  developerRole: false,
};

export default bedrockConformance;
