import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Perplexity: base URL, auth and documented differences from OpenAI (see docs/providers/perplexity.md). */
export const perplexityManifest: CompatibleProviderManifest = {
  id: 'perplexity',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['perplexity'] },
  name: 'Perplexity',
  description: 'Perplexity Sonar API (OpenAI-compatible chat, search-grounded).',
  baseUrl: 'https://api.perplexity.ai',
  pricing: { catalogProvider: 'perplexity' },
  operations: ['chat'],
  auth: { kind: 'bearer' },
  chat: {
    // Sonar models take no tools, no logit_bias and answer with one choice; usage comes in the stream unasked.
    n: false,
    unsupportedFields: ['tools', 'tool_choice', 'logit_bias'],
    streamUsage: 'always',
  },
};

/** Perplexity Sonar API (OpenAI-compatible chat, search-grounded). */
export const perplexity = defineCompatibleProvider(perplexityManifest);
