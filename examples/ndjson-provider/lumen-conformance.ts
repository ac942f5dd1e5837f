import type { ConformanceSubject } from '../../core/spec/provider/index.js';
import { lumenFake } from './lumen-fake.js';
import { lumen } from './index.js';

/** Lumen under the conformance kit: `npm run conformance -- --module dist/examples/ndjson-provider/lumen-conformance.js`. */
export const conformance: ConformanceSubject = {
  registration: lumen(),
  fake: lumenFake,
  model: 'lumen-1',
  supportsN: false,
  developerRole: false,
};
