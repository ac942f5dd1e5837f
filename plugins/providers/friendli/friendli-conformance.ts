import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { friendli, friendliManifest } from './index.js';

/** FriendliAI under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(friendli, friendliManifest, { model: 'meta-llama-3.1-8b-instruct' });
