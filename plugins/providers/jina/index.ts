import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Jina AI: base URL, auth and documented differences from OpenAI (see docs/providers/jina.md). */
export const jinaManifest: CompatibleProviderManifest = {
  id: 'jina',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['jina_ai'] },
  name: 'Jina AI',
  description: 'Jina AI embeddings and reranker APIs.',
  baseUrl: 'https://api.jina.ai/v1',
  operations: ['embed', 'rerank'],
  auth: { kind: 'bearer' },
  embed: {
    // Jina names the output encoding embedding_type (float, base64, ...).
    renamedFields: { encoding_format: 'embedding_type' },
  },
};

/** Jina AI embeddings and reranker APIs. */
export const jina = defineCompatibleProvider(jinaManifest);
