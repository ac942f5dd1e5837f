import { BootError, type LogSinkRegistration } from '../core/spec/index.js';

/** A configured log sink with its delivery settings resolved (docs/logs.md#sinks). */
export interface ResolvedLogSink {
  readonly name: string;
  readonly registration: LogSinkRegistration;
  readonly bodies: boolean;
  readonly batchSize: number;
  readonly queueCapacity: number;
  readonly retryMs: number;
  readonly timeoutMs: number;
  readonly spillMaxBytes: number;
}

const SINK_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

function whole(value: unknown, fallback: number, at: string, minimum = 1): number {
  const number = value ?? fallback;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < minimum) throw new BootError('INVALID_CONFIG', `${at} must be an integer of at least ${minimum}`);
  return number;
}

/**
 * Checks `logs.sinks`: each a sink plugin's registration (`plugin({ ... })`), named uniquely
 * (`name`, default the plugin id: it names the spill directory and the metrics' `sink` label).
 */
export function resolveSinks(sinks: unknown): ResolvedLogSink[] {
  if (sinks === undefined) return [];
  if (!Array.isArray(sinks)) throw new BootError('INVALID_CONFIG', 'logs.sinks must be an array of sink plugins');
  const names = new Set<string>();
  return sinks.map((registration: LogSinkRegistration, index) => {
    const at = `logs.sinks[${index}]`;
    if (registration?.manifest?.kind !== 'log-sink' || typeof registration.create !== 'function') throw new BootError('INVALID_CONFIG', `${at} is not a log sink plugin (call the plugin's factory: plugin({ ... }))`);
    const options = registration.options ?? {};
    const name = options.name ?? registration.manifest.id;
    if (typeof name !== 'string' || !SINK_NAME.test(name)) throw new BootError('INVALID_CONFIG', `${at}.name must be lower-case letters, digits, - or _`);
    if (names.has(name)) throw new BootError('INVALID_CONFIG', `${at}: the sink name "${name}" is used twice (give each a name)`);
    names.add(name);
    if (options.bodies !== undefined && typeof options.bodies !== 'boolean') throw new BootError('INVALID_CONFIG', `${at}.bodies must be a boolean`);
    return {
      name,
      registration,
      bodies: options.bodies ?? false,
      batchSize: whole(options.batchSize, 500, `${at}.batchSize`),
      queueCapacity: whole(options.queueCapacity, 10_000, `${at}.queueCapacity`),
      retryMs: whole(options.retryMs, 1000, `${at}.retryMs`),
      timeoutMs: whole(options.timeoutMs, 30_000, `${at}.timeoutMs`),
      spillMaxBytes: whole(options.spillMaxBytes, 1024 * 1024 * 1024, `${at}.spillMaxBytes`, 0),
    };
  });
}
