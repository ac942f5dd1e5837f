// The plugin toolkit, by audience: `core/spec/provider` (provider authors), `core/spec/guardrail`
// (guardrail authors), `core/spec/sink` (log sink authors) and `core/spec/config` (the configuration). This index re-exports all four,
// as it did before they were split, so a plugin or the configuration may keep importing it; plugin
// code imports only these modules (and `plugins/shared`). Lint enforces it (`.ci/eslint.config.js`).
export * from './provider/index.js';
export * from './guardrail/index.js';
export * from './config/index.js';
export * from './sink/index.js';
