import type { ConformanceSubject } from '../../../core/spec/index.js';
import { stabilityFake } from './stability-ai-fake.js';
import { stabilityAI } from './index.js';

/**
 * Stability AI under the conformance kit: its image check runs against the fake; the chat,
 * embeddings, rerank and audio checks report skips or refusals (nothing sent).
 */
export const stabilityAIConformance: ConformanceSubject = {
  registration: stabilityAI(),
  fake: stabilityFake,
  model: 'stable-image-core',
  imageModel: 'stable-image-core',
};

export default stabilityAIConformance;
