import type { ConformanceSubject } from '../../../core/spec/index.js';
import { FAKE_PROJECT, watsonxFake } from './watsonx-fake.js';
import { watsonx } from './index.js';

/** IBM watsonx.ai under the conformance kit: the plugin against a fake that checks path, version, project and watsonx's field names. */
export const watsonxConformance: ConformanceSubject = {
  registration: watsonx(),
  fake: watsonxFake,
  model: 'ibm/granite-3-3-8b-instruct',
  headers: { 'x-gateway-watsonx-project-id': FAKE_PROJECT },
  supportsN: false,
  developerRole: false,
  // An IAM access token (a JWT's shape) goes upstream as it is; an API key would be exchanged at IAM first.
  credential: 'eyJhbGciOiJSUzI1NiJ9.eyJpYW1faWQiOiJmYWtlIn0.ZmFrZS1zaWduYXR1cmU',
};

export default watsonxConformance;
