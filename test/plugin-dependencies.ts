import axios from 'axios';
import type { PluginDependencies } from '../core/spec/manifest.js';

/** A logger that drops everything. */
export const silentLogger: PluginDependencies['logger'] = { info() {}, warn() {}, error() {}, debug() {} };

/**
 * What the gateway's container hands a plugin, for a plugin created outside a gateway (unit tests,
 * benches): a silent logger, the real clock, a plain axios instance and no stored credentials, each replaceable.
 */
export function pluginDependencies(overrides: Partial<PluginDependencies> = {}): PluginDependencies {
  return {
    logger: silentLogger,
    http: axios.create(),
    clock: { now: () => Date.now() },
    credential: (id) => Promise.reject(new Error(`no stored credential with id "${id}"`)),
    ...overrides,
  };
}
