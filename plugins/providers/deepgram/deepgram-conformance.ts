import type { ConformanceSubject } from '../../../core/spec/index.js';
import { deepgramFake } from './deepgram-fake.js';
import { deepgram } from './index.js';

/**
 * Deepgram under the conformance kit: its transcription check runs against the fake; the chat, embeddings and
 * rerank checks report skips (rerank and the other audio operation refused, nothing sent).
 */
export const deepgramConformance: ConformanceSubject = {
  registration: deepgram(),
  fake: deepgramFake,
  transcriptionModel: 'nova-3',
  model: 'nova-3',
};

export default deepgramConformance;
