import type { ConformanceSubject } from '../../../core/spec/index.js';
import { foundryFake } from './azure-ai-foundry-fake.js';
import { azureAIFoundry } from './index.js';

/** Azure AI Foundry under the conformance kit: the plugin against a fake of the model inference endpoint. */
export const azureAIFoundryConformance: ConformanceSubject = {
  registration: azureAIFoundry({ resource: 'conformance-resource' }),
  fake: foundryFake(),
  model: 'Phi-4',
  embeddingModel: 'text-embedding-3-small',
  supportsN: false,
  developerRole: false,
};

export default azureAIFoundryConformance;
