import type { CompatibleProviderManifest } from '../openai-compatible/index.js';
import { compatibleFake } from '../openai-compatible/openai-compatible-fake.js';

/** OpenAI's wire format as the conformance fake speaks it: the compatible base without quirks, developer role kept. */
const wire: CompatibleProviderManifest = {
  id: 'openai',
  name: 'OpenAI',
  description: 'OpenAI API',
  baseUrl: 'https://api.openai.com/v1',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
  chat: { developerRole: true },
};

/** A fake of OpenAI's chat and embeddings API for the conformance kit (the other operations' fake is `test/fakes/openai-fake.ts`). */
export const openaiFake = compatibleFake(wire);
