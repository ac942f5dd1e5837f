import type { ConformanceSubject } from '../../../core/spec/index.js';
import { elevenLabsFake } from './elevenlabs-fake.js';
import { elevenlabs } from './index.js';

/**
 * ElevenLabs under the conformance kit: its speech check runs against the fake; the chat, embeddings and
 * rerank checks report skips (rerank and the other audio operation refused, nothing sent).
 */
export const elevenLabsConformance: ConformanceSubject = {
  registration: elevenlabs(),
  fake: elevenLabsFake,
  speechModel: 'eleven_multilingual_v2',
  speechVoice: 'JBFqnCBsd6RMkjVDRZzb',
  model: 'eleven_multilingual_v2',
};

export default elevenLabsConformance;
