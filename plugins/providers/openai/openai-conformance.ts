import { compatibleSubject } from '../openai-compatible/compatible-fake.js';
import type { CompatibleProviderManifest } from '../openai-compatible/index.js';
import { openai } from './index.js';

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

export const conformance = compatibleSubject(openai, wire, { model: 'gpt-4.1-mini', embeddingModel: 'text-embedding-3-small' });
