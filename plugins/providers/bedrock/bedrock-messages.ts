import { isRecord, type MessagesAdapter, type MessagesStreamEvent, type ProviderTarget, type StreamMapper } from '../../../core/spec/index.js';
import { messageOf, messagesEventStep } from '../anthropic/index.js';
import { parseEventData, streamError } from '../../shared/chat-mapping.js';
import { EventStreamDecoder } from './bedrock-eventstream.js';
import { modelPath } from './bedrock-request.js';
import { bedrockStreamFailure } from './bedrock-stream.js';

/** The `anthropic_version` Bedrock expects in the body of Claude requests. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** Claude model ids on Bedrock, with or without a cross-region prefix (`us.`, `eu.`, `global.`) or as an ARN. */
const isClaude = (model: string): boolean => /(^|[./])anthropic\.claude/.test(model);

/** The Messages body as InvokeModel takes it: model in the URL, version in the body, beta features as `anthropic_beta`. */
function invokeBody(request: Record<string, unknown>, target: ProviderTarget): Record<string, unknown> {
  const { model: _model, stream: _stream, ...body } = request;
  const beta = target.headers['anthropic-beta'];
  const out: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...body };
  if (beta) out.anthropic_beta = beta.split(',').map((name) => name.trim()).filter(Boolean);
  return out;
}

/** InvokeModelWithResponseStream: each `chunk` event carries one Messages event as base64 JSON in `bytes`. */
const createInvokeStreamMapper = (): StreamMapper<MessagesStreamEvent> => ({
  map(event) {
    const failure = bedrockStreamFailure(event);
    if (failure) return { error: failure };
    if (event.event !== 'chunk') return {};
    const payload = parseEventData(event.data);
    if (typeof payload?.bytes !== 'string') return { error: streamError('A Bedrock chunk event carries no bytes.', 'malformed_stream') };
    return messagesEventStep(parseEventData(Buffer.from(payload.bytes, 'base64').toString('utf8')));
  },
});

/**
 * Claude on Bedrock, natively: InvokeModel / InvokeModelWithResponseStream take the Messages body
 * and answer with Anthropic's Message and events; CountTokens counts. Other models are translated
 * to Converse.
 */
export const bedrockMessages: MessagesAdapter = {
  accepts: isClaude,
  toUpstream(request, target) {
    return {
      method: 'POST',
      url: modelPath(target.baseUrl, request.model, request.stream ? 'invoke-with-response-stream' : 'invoke'),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(invokeBody(request, target)),
    };
  },
  fromUpstream: messageOf,
  stream: { createDecoder: () => new EventStreamDecoder(), createMapper: createInvokeStreamMapper },
  countTokens: {
    toUpstream(request, target) {
      const body = Buffer.from(JSON.stringify({ max_tokens: 1, ...invokeBody(request, target) })).toString('base64');
      return { method: 'POST', url: modelPath(target.baseUrl, request.model, 'count-tokens'), headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: { invokeModel: { body } } }) };
    },
    fromUpstream(body) {
      if (!isRecord(body) || typeof body.inputTokens !== 'number') throw new TypeError('CountTokens answer without inputTokens');
      return { input_tokens: body.inputTokens };
    },
  },
};
