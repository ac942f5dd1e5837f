import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** DeepInfra: base URL, auth and documented differences from OpenAI (see docs/providers/deepinfra.md). */
export const deepinfraManifest: CompatibleProviderManifest = {
  id: 'deepinfra',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['deepinfra'] },
  name: 'DeepInfra',
  description: 'DeepInfra inference (OpenAI-compatible chat and embeddings).',
  baseUrl: 'https://api.deepinfra.com/v1/openai',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
};

/** DeepInfra inference (OpenAI-compatible chat and embeddings). */
export const deepinfra = defineCompatibleProvider(deepinfraManifest);
