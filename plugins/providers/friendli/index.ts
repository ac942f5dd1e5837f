import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** FriendliAI Serverless Endpoints: base URL, auth and documented differences from OpenAI (see docs/providers/friendli.md). */
export const friendliManifest: CompatibleProviderManifest = {
  id: 'friendli',
  name: 'FriendliAI',
  description: 'FriendliAI Serverless Endpoints (OpenAI-compatible chat; a Friendli personal access token).',
  baseUrl: 'https://api.friendli.ai/serverless/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
  foreignNames: { litellm: ['friendliai'] },
};

/** FriendliAI Serverless Endpoints (OpenAI-compatible chat). */
export const friendli = defineCompatibleProvider(friendliManifest);
