import { hostname } from 'node:os';
import { gzipSync } from 'node:zlib';
import { defineLogSink, type SinkRecord, SinkError } from '../../../core/spec/index.js';
import { CREDENTIAL_PROPERTY, groupsUnder, postBody, secretOf } from '../../shared/sink-delivery.js';

const SINK = 'datadog';

/** The intake's caps per request: 5 MB uncompressed (kept under, with room for the array), 1000 logs. */
const MAX_PAYLOAD_BYTES = 4_500_000;
const MAX_LOGS = 1000;

export interface DatadogSinkParams {
  /** The Datadog site (`datadoghq.com`, `datadoghq.eu`, `us3.datadoghq.com`, ...; default `datadoghq.com`). */
  site?: string;
  /** Or the intake's base URL itself (a proxy, a test's fake); `/api/v2/logs` is added. */
  url?: string;
  /** The API key (typically `process.env.DD_API_KEY!`); never logged. */
  apiKey?: string;
  /** Or a credential stored in the vault holding it as its `apiKey`. */
  credential?: string;
  /** `service` (default `llm-gateway`), `ddsource` (default `llm-gateway`), `ddtags` (`env:prod,team:ml`), `hostname` (default the machine's). */
  service?: string;
  source?: string;
  tags?: string;
  hostname?: string;
}

/** One record as a Datadog log: a one-line message, the status, standard attributes, and the record under `gateway`. */
export function datadogLog(record: SinkRecord, params: DatadogSinkParams, host: string): Record<string, unknown> {
  const status = record.status >= 500 || record.outcome === 'stream_error' ? 'error' : record.status >= 400 ? 'warn' : 'info';
  return {
    ddsource: params.source ?? 'llm-gateway',
    ...(params.tags ? { ddtags: params.tags } : {}),
    hostname: params.hostname ?? host,
    service: params.service ?? 'llm-gateway',
    message: `${record.method} ${record.path} ${record.status}${record.model ? ` ${record.model}` : ''}`,
    status,
    date: record.time,
    duration: Math.round(record.latency_ms * 1_000_000),
    http: { method: record.method, status_code: record.status, url_details: { path: record.path } },
    ...(record.end_user ? { usr: { id: record.end_user } } : {}),
    ...(record.error_code || record.error_type ? { error: { kind: record.error_code ?? record.error_type, message: record.error_message } } : {}),
    gateway: record,
  };
}

/**
 * Datadog logs through the HTTP intake v2 (`POST https://http-intake.logs.<site>/api/v2/logs`,
 * `DD-API-KEY`, gzip): one log per request, batches split under the intake's caps (5 MB, 1000
 * logs). The intake does not deduplicate: `gateway.id` is the record's id for queries.
 */
export const datadog = defineLogSink<DatadogSinkParams>(
  {
    id: SINK,
    version: '1.0.0',
    description: 'Sends each log record to Datadog logs through the HTTP intake v2 (gzip), split under its caps.',
    params: {
      type: 'object',
      properties: {
        site: { type: 'string', pattern: '^[a-z0-9.-]+$' },
        url: { type: 'string', pattern: '^https?://' },
        apiKey: { type: 'string', minLength: 1, writeOnly: true },
        credential: CREDENTIAL_PROPERTY,
        service: { type: 'string', minLength: 1 },
        source: { type: 'string', minLength: 1 },
        tags: { type: 'string' },
        hostname: { type: 'string', minLength: 1 },
      },
    },
  },
  (params, dependencies) => {
    if ((params.apiKey === undefined) === (params.credential === undefined)) throw new Error('datadog: give apiKey or credential (a stored credential id), one of them');
    const base = (params.url ?? `https://http-intake.logs.${params.site ?? 'datadoghq.com'}`).replace(/\/+$/, '');
    const secret = secretOf(SINK, params.apiKey ? { apiKey: params.apiKey } : undefined, params.credential, dependencies);
    const host = hostname();
    return {
      async deliver(records) {
        const apiKey = (await secret())?.apiKey;
        if (!apiKey) throw new SinkError(SINK, 'the credential has no API key');
        const logs = records.map((record) => JSON.stringify(datadogLog(record, params, host)));
        for (const group of groupsUnder(logs, MAX_PAYLOAD_BYTES, MAX_LOGS)) {
          const body = gzipSync(`[${group.join(',')}]`);
          await postBody(dependencies.http, SINK, `${base}/api/v2/logs`, body, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'dd-api-key': apiKey });
        }
      },
    };
  },
);
