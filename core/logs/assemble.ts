import { type Container, GatewaySettings, provide } from '../container.js';
import { GatewayMetrics } from '../metrics/metrics.js';
import { SinkMetrics } from '../metrics/sink-metrics.js';
import { pluginDependencies } from '../plugins.js';
import type { Hook } from '../pipeline/hook.js';
import { Telemetry } from '../telemetry/assemble.js';
import { bodyCaptureHook } from './capture.js';
import type { LogSink } from './entry.js';
import { createRequestLog, type RequestLog } from './index.js';
import { PinoLogSink } from './pino-sink.js';
import { createSinkQueues } from './sinks.js';

/** The request log (queue and store, the external sinks' queues), the sinks every log entry goes to, and the body-capture hook. */
export class RequestLogging {
  constructor(
    readonly log: RequestLog,
    readonly sinks: readonly LogSink[],
    readonly hooks: readonly Hook[],
  ) {}
}

/** Registers the request log: its store opens in the background, its queue is read by the metrics. */
export function registerLogs(container: Container): void {
  provide(container, RequestLogging, (c) => {
    const { config, options, logger, lines } = c.resolve(GatewaySettings);
    const metrics = c.resolve(GatewayMetrics);
    // External sinks (logs.sinks): plugins, each behind a durable queue of its own, counted in metrics.
    let external: ReturnType<typeof createSinkQueues> = [];
    const sinkMetrics = config.logs.sinks.length > 0 ? new SinkMetrics(metrics.registry, () => external) : undefined;
    external = createSinkQueues(config, pluginDependencies(c), logger, (name) => sinkMetrics?.observer(name) ?? {});
    const log = createRequestLog(config, logger, metrics.logQueueObserver, external);
    const { tracer } = c.resolve(Telemetry);
    const sinks = [new PinoLogSink(logger, lines), metrics.sink, log.queue, ...external, ...(tracer.sink ? [tracer.sink] : []), ...(options.sinks ?? [])];
    const capture = config.logs.bodies === false ? [] : [bodyCaptureHook({ policy: config.logs.bodies, maxBytes: config.logs.bodyMaxBytes })];
    return new RequestLogging(log, sinks, capture);
  });
}
