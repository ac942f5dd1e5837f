import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderFakeRenderer } from '../../../core/spec/index.js';
import type { CompatibleProviderManifest } from '../openai-compatible/index.js';
import { compatibleFake } from '../openai-compatible/openai-compatible-fake.js';
import { FOUNDRY_CHAT_QUIRKS } from './index.js';

const fixtures = join(process.cwd(), 'plugins/providers/azure-ai-foundry/__fixtures__');

export const foundryFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** The wire the fake speaks: OpenAI's shapes with Foundry's limits, the key in `api-key`. */
const wire: CompatibleProviderManifest = {
  id: 'azure-ai-foundry',
  name: 'Azure AI Foundry',
  description: 'fake',
  baseUrl: 'http://unused',
  operations: ['chat', 'embed'],
  auth: { kind: 'header', header: 'api-key' },
  chat: FOUNDRY_CHAT_QUIRKS,
};

/**
 * The model inference endpoint, faked: chat and embeddings in OpenAI's shapes with Foundry's limits
 * (no `n`, `max_tokens` only, usage on the stream unasked), and every request must carry an
 * `api-version` query and the key in `api-key`.
 */
export function foundryFake(): ProviderFakeRenderer {
  const inner = compatibleFake(wire);
  return {
    ...inner,
    checkAuth(request, credential) {
      const problems = inner.checkAuth(request, credential);
      if (!/[?&]api-version=\d{4}-\d{2}-\d{2}(-preview)?(&|$)/.test(request.url)) problems.push('no api-version query parameter');
      return problems;
    },
  };
}
