import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** OVHcloud AI Endpoints: base URL, auth and documented differences from OpenAI (see docs/providers/ovhcloud.md). */
export const ovhcloudManifest: CompatibleProviderManifest = {
  id: 'ovhcloud',
  name: 'OVHcloud AI Endpoints',
  description: 'OVHcloud AI Endpoints (OpenAI-compatible chat and embeddings, hosted in Europe).',
  baseUrl: 'https://oai.endpoints.kepler.ai.cloud.ovh.net/v1',
  pricing: { catalogProvider: 'ovhcloud' },
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
};

/** OVHcloud AI Endpoints (OpenAI-compatible chat and embeddings, hosted in Europe). */
export const ovhcloud = defineCompatibleProvider(ovhcloudManifest);
