import { type Container, GatewaySettings, provide } from '../container.js';
import { GatewayMetrics } from '../metrics/metrics.js';
import type { Hook } from '../pipeline/hook.js';
import { Telemetry } from '../telemetry/assemble.js';
import { bodyCaptureHook } from './capture.js';
import type { LogSink } from './entry.js';
import { createRequestLog, type RequestLog } from './index.js';
import { PinoLogSink } from './pino-sink.js';

/** The request log (queue and store), the sinks every log entry goes to, and the body-capture hook. */
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
    const log = createRequestLog(config, logger, metrics.logQueueObserver);
    const { tracer } = c.resolve(Telemetry);
    const sinks = [new PinoLogSink(logger, lines), metrics.sink, log.queue, ...(tracer.sink ? [tracer.sink] : []), ...(options.sinks ?? [])];
    const capture = config.logs.bodies === false ? [] : [bodyCaptureHook({ policy: config.logs.bodies, maxBytes: config.logs.bodyMaxBytes })];
    return new RequestLogging(log, sinks, capture);
  });
}
