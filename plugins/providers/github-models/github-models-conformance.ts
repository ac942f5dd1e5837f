import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { githubModels, githubModelsManifest } from './index.js';

/** GitHub Models under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(githubModels, githubModelsManifest, { model: 'openai/gpt-4.1-mini' });
