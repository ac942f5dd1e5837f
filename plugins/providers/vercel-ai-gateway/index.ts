import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Vercel AI Gateway: base URL, auth and documented differences from OpenAI (see docs/providers/vercel-ai-gateway.md). */
export const vercelAiGatewayManifest: CompatibleProviderManifest = {
  id: 'vercel-ai-gateway',
  name: 'Vercel AI Gateway',
  description: 'Vercel AI Gateway as an upstream (OpenAI-compatible chat and embeddings over many providers).',
  baseUrl: 'https://ai-gateway.vercel.sh/v1',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
};

/** Vercel AI Gateway as an upstream (OpenAI-compatible chat and embeddings over many providers). */
export const vercelAiGateway = defineCompatibleProvider(vercelAiGatewayManifest);
