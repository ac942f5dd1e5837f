import { type CacheableOperation, withoutDefaults } from '../../../cache/cacheable.js';
import type { GatewayContext, GatewayResponse } from '../../../pipeline/context.js';
import type { GeminiRequest, GeminiResponse } from '../../../spec/gemini.js';
import { unifiedGeminiUsage } from '../../../spec/gemini.js';
import { isRecord } from '../../../spec/is-record.js';
import { renderAnswer } from '../../protocol-respond.js';
import { judgedResponse, nativeAnswerOf, nativeAnswerText } from './native.js';
import { rendering, streamHeaders } from './respond.js';

/** The client's answer from a stored response (a response cache hit), judged again by the output guardrails, in the request's framing. */
export async function replayGemini(context: GatewayContext, response: GeminiResponse): Promise<GatewayResponse> {
  const judge = context.guardrail?.output;
  const judged = judge ? judgedResponse(await judge.response(nativeAnswerOf(response), nativeAnswerText)) : response;
  const request = context.request.body as GeminiRequest;
  return renderAnswer(context, judged, rendering(request), context.request.streaming ? streamHeaders(request) : undefined);
}

/** A content's text (text parts only); undefined when it holds anything else. */
function contentText(content: unknown): string | undefined {
  if (!isRecord(content) || !Array.isArray(content.parts)) return undefined;
  const texts: string[] = [];
  for (const part of content.parts) {
    if (!isRecord(part) || typeof part.text !== 'string' || Object.keys(part).some((key) => key !== 'text')) return undefined;
    texts.push(part.text);
  }
  return texts.join('\n');
}

/**
 * The response cache's view of `generateContent`: every request is stateless, so every one is
 * cached. Identity: the body (the path's model in it) without the stream framing; semantic lookups
 * embed the text of `contents` (`role: text` lines; only when every part is text), the rest must
 * match exactly. The answer stored is the response the client gets, before output guardrails
 * (native, or translated from chat), complete, with no candidate stopped for safety and no blocked
 * prompt; a hit is judged again, and served as JSON or as a stream in the request's framing.
 */
export const geminiCache: CacheableOperation<GeminiResponse> = {
  identity: (body) => (isRecord(body) ? withoutDefaults(body, {}) : undefined),
  semantic(identity) {
    if (!Array.isArray(identity.contents)) return undefined;
    const lines: string[] = [];
    for (const content of identity.contents) {
      const text = contentText(content);
      if (text === undefined) return undefined;
      lines.push(`${String((content as { role?: unknown }).role ?? 'user')}: ${text}`);
    }
    const { contents: _contents, ...rest } = identity;
    return { text: lines.join('\n'), rest };
  },
  storable: (response) =>
    Array.isArray(response.candidates) &&
    response.candidates.length > 0 &&
    response.candidates.every((candidate) => typeof candidate.finishReason === 'string' && !['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'OTHER'].includes(candidate.finishReason)) &&
    !response.promptFeedback?.blockReason,
  usage: (response) => ({ usage: unifiedGeminiUsage(response.usageMetadata), ...(response.modelVersion ? { model: response.modelVersion } : {}) }),
  replay: replayGemini,
};
