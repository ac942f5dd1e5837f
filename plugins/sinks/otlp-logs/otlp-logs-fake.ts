import { intakeFake } from '../../shared/intake-fake.js';

// A loopback fake of an OpenTelemetry collector's OTLP/HTTP logs receiver with the JSON encoding:
// `POST /v1/logs`, `Content-Type: application/json`, an `ExportLogsServiceRequest`; answers 200 with
// an `ExportLogsServiceResponse` (`{}`), 415 for another content type. `failing` answers 503.

export interface OtlpFake {
  readonly url: string;
  readonly logRecords: Array<Record<string, any>>;
  readonly resources: Array<Record<string, any>>;
  readonly headers: Array<Record<string, string | string[] | undefined>>;
  failing: boolean;
  close(): void;
}

export async function otlpFake(): Promise<OtlpFake> {
  const state = { logRecords: [] as Array<Record<string, any>>, resources: [] as Array<Record<string, any>>, headers: [] as Array<Record<string, string | string[] | undefined>>, failing: false };
  const server = await intakeFake(({ method, url, headers, body }) => {
    if (method !== 'POST' || url !== '/v1/logs') return { status: 404 };
    if (!String(headers['content-type']).startsWith('application/json')) return { status: 415 };
    if (state.failing) return { status: 503 };
    state.headers.push(headers);
    const request = JSON.parse(body.toString('utf8')) as { resourceLogs: Array<{ resource: Record<string, any>; scopeLogs: Array<{ logRecords: Array<Record<string, any>> }> }> };
    for (const resourceLogs of request.resourceLogs) {
      state.resources.push(resourceLogs.resource);
      for (const scopeLogs of resourceLogs.scopeLogs) state.logRecords.push(...scopeLogs.logRecords);
    }
    return { status: 200, body: {} };
  });
  return Object.assign(state, { url: server.url, close: () => server.close() });
}
