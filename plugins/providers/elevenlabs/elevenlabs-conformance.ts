import type { ConformanceSubject } from '../../../core/spec/index.js';
import { elevenLabsFake } from './elevenlabs-fake.js';
import { elevenlabs } from './index.js';

/**
 * ElevenLabs under the conformance kit. The kit's checks are chat, embeddings and rerank ones, so
 * for this speech-only plugin they report skips (and rerank refused); speech is proven by
 * elevenlabs.e2e.test.ts against the same fake.
 */
export const elevenLabsConformance: ConformanceSubject = {
  registration: elevenlabs(),
  fake: elevenLabsFake,
  model: 'eleven_multilingual_v2',
};

export default elevenLabsConformance;
