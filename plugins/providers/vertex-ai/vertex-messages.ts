import type { MessagesAdapter, MessagesCountRequest, MessagesRequest, ProviderTarget } from '../../../core/spec/index.js';
import { googleGenerateContent } from '../google-shared/index.js';
import { createMessagesStreamMapper, messageOf, tokenCountOf } from '../anthropic/index.js';
import { VERTEX_ANTHROPIC_VERSION } from './vertex-chat.js';
import { publisherOf, vertexHeaders, vertexModelUrl } from './vertex-target.js';

/** Vertex's headers plus the client's `anthropic-beta` (Claude on Vertex reads beta features from it). */
function headers(target: ProviderTarget): Record<string, string> {
  const out = vertexHeaders(target);
  const beta = target.headers['anthropic-beta'];
  if (beta) out['anthropic-beta'] = beta;
  return out;
}

/** The Messages body as Vertex takes it: the model is in the URL and the version in the body. */
function vertexBody(request: MessagesRequest): string {
  const { model: _model, ...body } = request;
  return JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body });
}

/**
 * Claude on Vertex AI, natively: `rawPredict` / `streamRawPredict` take the Messages body and answer
 * with Anthropic's Message and event stream. Gemini models go through the chat translation.
 */
export const vertexMessages: MessagesAdapter = {
  accepts: (model) => publisherOf(model).publisher === 'anthropic',
  toUpstream(request, target) {
    const { url } = vertexModelUrl(target, request.model, request.stream ? 'streamRawPredict' : 'rawPredict');
    return { method: 'POST', url, headers: headers(target), body: vertexBody(request) };
  },
  fromUpstream: messageOf,
  stream: { createMapper: createMessagesStreamMapper },
  countTokens: {
    // Vertex counts Claude tokens at a model of its own, `count-tokens`, with the model named in the body.
    toUpstream(request: MessagesCountRequest, target) {
      const { url } = vertexModelUrl(target, 'anthropic/count-tokens', 'rawPredict');
      return { method: 'POST', url, headers: headers(target), body: JSON.stringify({ ...request, model: publisherOf(request.model).model }) };
    },
    fromUpstream: tokenCountOf,
  },
};

/**
 * The Gemini API natively for Google's models on Vertex AI (`…/publishers/google/models/{model}:{method}`);
 * a Claude model named on these routes is translated through chat.
 */
export const vertexGenerateContent = googleGenerateContent({
  accepts: (model) => publisherOf(model).publisher === 'google',
  url: (target, model, method) => vertexModelUrl(target, model, method).url,
  headers: vertexHeaders,
  // Vertex AI's countTokens takes the fields that make the prompt (no safety settings or tool config).
  countBody: ({ contents, systemInstruction, tools, generationConfig }) => ({
    contents,
    ...(systemInstruction === undefined ? {} : { systemInstruction }),
    ...(tools === undefined ? {} : { tools }),
    ...(generationConfig === undefined ? {} : { generationConfig }),
  }),
});
