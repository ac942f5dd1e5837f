import type { SpeechAdapter } from '../../../core/spec/index.js';
import { openAIJsonPost } from './openai-body.js';

/** OpenAI text to speech: identity; the audio is relayed by the core as it arrives. */
export const openAISpeech: SpeechAdapter = {
  toUpstream: (request, target, original) => openAIJsonPost('/audio/speech', request, target, original),
  models: ['gpt-4o-mini-tts'],
  voices: ['ash', 'ballad', 'coral', 'sage', 'verse', 'marin', 'cedar'],
};
