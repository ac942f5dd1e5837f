import type { ConformanceSubject } from '../../core/spec/index.js';
import { acmeFake } from './acme-fake.js';
import { acme } from './index.js';

/** Acme under the conformance kit: `npm run conformance -- --module dist/examples/provider/acme-conformance.js`. */
export const conformance: ConformanceSubject = {
  registration: acme(),
  fake: acmeFake,
  model: 'acme-small',
  supportsN: false,
  developerRole: false,
};
