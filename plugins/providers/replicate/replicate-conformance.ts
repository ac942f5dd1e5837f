import type { ConformanceSubject } from '../../../core/spec/index.js';
import { replicateFake } from './replicate-fake.js';
import { replicate } from './index.js';

/**
 * Replicate under the conformance kit: an official language model through the predictions API.
 * Its language models take no tools and one answer per request (those checks report skips).
 */
export const replicateConformance: ConformanceSubject = {
  registration: replicate(),
  fake: replicateFake,
  model: 'meta/meta-llama-3-8b-instruct',
  supportsN: false,
  supportsTools: false,
  developerRole: false,
};

export default replicateConformance;
