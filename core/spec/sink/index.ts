// The log sink toolkit: the contract a sink plugin implements and what it needs from the core, for
// sink authors (published as `llm-gateway/sink`). Sink code imports only this module or `core/spec`
// (its index, which re-exports it), and `plugins/shared`.

/** The contract: the record a sink receives, its manifest, registration and target. */
export * from '../sink.js';
/** The dependencies `create` receives (logger, HTTP client, clock, vault credentials). */
export type { PluginDependencies, PluginLogger, StoredCredential, Clock } from '../manifest.js';
export * from '../is-record.js';
