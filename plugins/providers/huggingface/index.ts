import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Hugging Face Inference Providers: the router's base URL, auth and documented differences from OpenAI (see docs/providers/huggingface.md). */
export const huggingfaceManifest: CompatibleProviderManifest = {
  id: 'huggingface',
  name: 'Hugging Face Inference Providers',
  description: 'Hugging Face Inference Providers router (OpenAI-compatible chat; the model may name its backend, `<model>:<provider>`, or a policy, `:fastest`, `:cheapest`).',
  baseUrl: 'https://router.huggingface.co/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
};

/** Hugging Face Inference Providers router (OpenAI-compatible chat). */
export const huggingface = defineCompatibleProvider(huggingfaceManifest);
