import type { ConformanceSubject } from '../../../core/spec/index.js';
import { FAKE_ENDPOINT, FAKE_REGION, FAKE_SECRET_ACCESS_KEY, FAKE_SESSION_TOKEN, sageMakerFake } from './sagemaker-fake.js';
import { sagemaker } from './index.js';

/** SageMaker under the conformance kit: SigV4 with a session token, a TGI Messages API container behind an endpoint. */
export const sageMakerConformance: ConformanceSubject = {
  registration: sagemaker(),
  fake: sageMakerFake(),
  model: FAKE_ENDPOINT,
  credential: 'AKIACONFORMANCE0SM01',
  headers: {
    'x-gateway-cloud-c-secret-access-key': FAKE_SECRET_ACCESS_KEY,
    'x-gateway-cloud-c-session-token': FAKE_SESSION_TOKEN,
    'x-gateway-cloud-c-region': FAKE_REGION,
  },
  supportsN: false,
  developerRole: false,
};

export default sageMakerConformance;
