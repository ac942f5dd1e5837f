/**
 * The provider conformance kit. A plugin author (in this repository or outside it) writes a
 * {@link ConformanceSubject}: the plugin plus a pure renderer answering the kit's scenarios in the
 * provider's wire format, and runs {@link runConformance} on it (or `npm run conformance`). Published
 * as `llm-gateway/conformance`; it needs the `openai` SDK, its client.
 */
export * from '../spec/conformance.js';
export { CHECKS, CheckFailure, CheckSkipped, type Check, type CheckContext } from './checks.js';
export { type CheckResult, type ConformanceOptions, type ConformanceReport, formatReport, runConformance } from './kit.js';
export { shippedSubjects, subjectsOf } from './discover.js';
export { startScenarioServer, type ScenarioServer } from './fake-server.js';
export { KIT_ACCOUNT_KEY, type KitGateway } from './gateway.js';
export { requestJson, splitText } from '../spec/fake-render.js';
