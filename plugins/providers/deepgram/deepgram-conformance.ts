import type { ConformanceSubject } from '../../../core/spec/index.js';
import { deepgramFake } from './deepgram-fake.js';
import { deepgram } from './index.js';

/**
 * Deepgram under the conformance kit. The kit's checks are chat, embeddings and rerank ones, so for
 * this transcription-only plugin they report skips (and rerank refused); transcription is proven by
 * deepgram.e2e.test.ts against the same fake.
 */
export const deepgramConformance: ConformanceSubject = {
  registration: deepgram(),
  fake: deepgramFake,
  model: 'nova-3',
};

export default deepgramConformance;
