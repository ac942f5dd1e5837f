import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { minimax, minimaxManifest } from './index.js';

/** MiniMax under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(minimax, minimaxManifest, { model: 'MiniMax-M1' });
