import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Novita AI: base URL, auth and documented differences from OpenAI (see docs/providers/novita.md). */
export const novitaManifest: CompatibleProviderManifest = {
  id: 'novita',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['novita'] },
  name: 'Novita AI',
  description: 'Novita AI LLM API (OpenAI-compatible chat and embeddings).',
  baseUrl: 'https://api.novita.ai/v3/openai',
  pricing: { catalogProvider: 'novita' },
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
};

/** Novita AI LLM API (OpenAI-compatible chat and embeddings). */
export const novita = defineCompatibleProvider(novitaManifest);
