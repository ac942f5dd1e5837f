import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Groq: base URL, auth and documented differences from OpenAI (see docs/providers/groq.md). */
export const groqManifest: CompatibleProviderManifest = {
  id: 'groq',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['groq'] },
  name: 'Groq',
  description: 'Groq LPU inference (OpenAI-compatible chat).',
  baseUrl: 'https://api.groq.com/openai/v1',
  pricing: { catalogProvider: 'groq' },
  operations: ['chat'],
  auth: { kind: 'bearer' },
  chat: {
    // Documented: these fields are refused with a 400; n must be 1; messages[].name is refused.
    n: false,
    unsupportedFields: ['logprobs', 'logit_bias', 'top_logprobs'],
    noMessageNames: true,
    // Groq reports stream usage under x_groq.usage in its last chunk.
    streamUsageField: 'x_groq.usage',
  },
};

/** Groq LPU inference (OpenAI-compatible chat). */
export const groq = defineCompatibleProvider(groqManifest);
