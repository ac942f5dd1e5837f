import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { vercelAiGateway, vercelAiGatewayManifest } from './index.js';

/** Vercel AI Gateway under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(vercelAiGateway, vercelAiGatewayManifest, { model: 'openai/gpt-4o-mini', embeddingModel: 'openai/text-embedding-3-small' });
