import type { EmbedAdapter, EmbeddingResponse } from '../../../core/spec/index.js';
import type { EmbedQuirks } from './compatible-manifest.js';

/** The embeddings adapter of an OpenAI-compatible provider, with its documented quirks. */
export function compatibleEmbedAdapter(options: { provider: string; path?: string; quirks?: EmbedQuirks }): EmbedAdapter {
  const quirks = options.quirks ?? {};
  const path = options.path ?? '/embeddings';
  return {
    toUpstream(request, target, original) {
      const body: Record<string, unknown> = { ...request };
      let changed = false;
      if (quirks.dropFloatEncoding && body.encoding_format === 'float') {
        delete body.encoding_format;
        changed = true;
      }
      for (const [from, to] of Object.entries(quirks.renamedFields ?? {})) {
        if (from in body) {
          body[to] = body[from];
          delete body[from];
          changed = true;
        }
      }
      return {
        method: 'POST',
        url: `${target.baseUrl}${path}`,
        headers: { 'content-type': 'application/json' },
        body: !changed && original ? original : JSON.stringify(body),
      };
    },

    fromUpstream(body, request) {
      const response = body as Partial<EmbeddingResponse> | null;
      if (typeof response !== 'object' || response === null || !Array.isArray(response.data)) {
        throw new TypeError(`${options.provider} embeddings response without data`);
      }
      // Some providers report only total_tokens (embeddings have no completion tokens).
      const usage = (response.usage ?? {}) as Partial<EmbeddingResponse['usage']>;
      const total = usage.total_tokens ?? usage.prompt_tokens ?? 0;
      return {
        ...response,
        object: 'list',
        model: response.model ?? request.model,
        data: response.data.map((item, index) => ({ ...item, object: 'embedding', index: item.index ?? index })),
        usage: { ...usage, prompt_tokens: usage.prompt_tokens ?? total, total_tokens: total },
      };
    },
  };
}
