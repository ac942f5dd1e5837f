import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { volcengineArk, volcengineArkManifest } from './index.js';

/** Volcengine Ark under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(volcengineArk, volcengineArkManifest, { model: 'doubao-seed-1-6-250615', embeddingModel: 'doubao-embedding-text-240715' });
