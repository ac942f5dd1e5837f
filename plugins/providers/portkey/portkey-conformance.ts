import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { portkey, portkeyManifest } from './index.js';

/** Portkey under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(portkey, portkeyManifest, { model: 'gpt-4o-mini', embeddingModel: 'text-embedding-3-small' });
