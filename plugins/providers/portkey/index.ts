import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Portkey: base URL, auth and documented differences from OpenAI (see docs/providers/portkey.md). */
export const portkeyManifest: CompatibleProviderManifest = {
  id: 'portkey',
  name: 'Portkey',
  description: 'The Portkey gateway as an upstream (OpenAI-compatible chat and embeddings; x-portkey-api-key).',
  baseUrl: 'https://api.portkey.ai/v1',
  operations: ['chat', 'embed'],
  auth: { kind: 'header', header: 'x-portkey-api-key' },
};

/** The Portkey gateway as an upstream (OpenAI-compatible chat and embeddings; x-portkey-api-key). */
export const portkey = defineCompatibleProvider(portkeyManifest);
