import type { ConformanceSubject } from '../../../core/spec/index.js';
import { cohereFake } from './cohere-fake.js';
import { cohere } from './index.js';

export const cohereConformance: ConformanceSubject = {
  registration: cohere(),
  fake: cohereFake,
  model: 'command-a-03-2025',
  embeddingModel: 'embed-v4.0',
  rerankModel: 'rerank-v3.5',
  rerankUsage: 'search_units',
  supportsN: false,
  developerRole: false,
};

export default cohereConformance;
