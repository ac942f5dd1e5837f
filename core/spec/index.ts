export * from './guardrail.js';
export * from './hook.js';
export * from './manifest.js';
export * from './provider.js';
export * from './stage.js';
export * from './unified.js';
