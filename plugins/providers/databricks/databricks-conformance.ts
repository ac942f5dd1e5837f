import type { ConformanceSubject } from '../../../core/spec/index.js';
import { databricksFake, FAKE_WORKSPACE } from './databricks-fake.js';
import { databricks } from './index.js';

/** Databricks under the conformance kit: the plugin against a fake that serves only the serving-endpoints paths and answers Databricks' errors. */
export const databricksConformance: ConformanceSubject = {
  registration: databricks(),
  fake: databricksFake(),
  model: 'databricks-meta-llama-3-3-70b-instruct',
  embeddingModel: 'databricks-gte-large-en',
  headers: { 'x-gateway-databricks-host': FAKE_WORKSPACE },
  supportsN: false,
  developerRole: false,
};

export default databricksConformance;
