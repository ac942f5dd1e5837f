import { parseJsonObject, readBody } from '../http/body.js';
import type { CompletionRequest } from '../spec/unified.js';
import { validateCompletionRequest } from './completions-schema.js';
import { textCompletionStreaming } from './completions-stream.js';
import { type OperationHandler, unsupportedOperation } from './operation.js';
import { CompletionAssembly } from './stream-assembly.js';
import { streamableCache } from './streamable-cache.js';
import { respondStreamable } from './streamed-response.js';

/** `POST /v1/completions` (legacy text completions): plain and streamed, the same rules as chat streams. */
export const completions: OperationHandler = {
  name: 'completion',
  mapsErrors: true,

  async parse(request, options) {
    const raw = await readBody(request, options.bodyLimitBytes, options);
    const rawText = raw.toString('utf8');
    const body = validateCompletionRequest(parseJsonObject(rawText));
    return { body, raw, rawText, model: body.model, streaming: body.stream === true };
  },

  toUpstream(context, provider, target) {
    const adapter = provider.operations.completion;
    if (!adapter || (context.request.streaming && !adapter.stream)) throw unsupportedOperation(provider.id, 'completion', 'POST /v1/completions');
    const request = context.request.body as CompletionRequest;
    adapter.validate?.(request);
    return adapter.toUpstream(request, target, context.request.raw);
  },

  respond: (context, provider, forward) => respondStreamable(context, provider, forward, provider.operations.completion, textCompletionStreaming),

  cache: streamableCache(textCompletionStreaming, {
    defaults: { frequency_penalty: 0, presence_penalty: 0, n: 1, temperature: 1, top_p: 1, echo: false, best_of: 1 },
    textField: 'prompt',
    // A prompt of text (one or several strings) is compared by meaning; token prompts only exactly.
    text: (prompt) => (typeof prompt === 'string' ? prompt : Array.isArray(prompt) && prompt.every((part) => typeof part === 'string') ? prompt.join('\n') : undefined),
    assemble: () => new CompletionAssembly(),
  }),
};
