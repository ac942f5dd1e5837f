import { type Container, GatewaySettings, provide } from '../container.js';
import { OtlpExporter } from './otlp-exporter.js';
import { Tracer } from './tracer.js';

/** Reported in traces (`service.version`). */
const GATEWAY_VERSION = '0.1.0';

/** The tracer, and the OTLP exporter it sends spans to when telemetry is configured. */
export class Telemetry {
  constructor(
    readonly tracer: Tracer,
    readonly exporter: OtlpExporter | undefined,
  ) {}
}

/** Registers the telemetry: an exporter only when the configuration names a traces endpoint. */
export function registerTelemetry(container: Container): void {
  provide(container, Telemetry, (c) => {
    const { config, logger } = c.resolve(GatewaySettings);
    const { telemetry } = config;
    const exporter = telemetry
      ? new OtlpExporter({
          url: telemetry.tracesUrl,
          headers: telemetry.headers,
          serviceName: telemetry.serviceName,
          version: GATEWAY_VERSION,
          onError: (error) => logger.debug({ err: { message: (error as Error)?.message } }, 'trace export failed'),
        })
      : undefined;
    return new Telemetry(new Tracer(exporter), exporter);
  });
}
