import type OpenAI from 'openai';
import { type Fake, type FakeHandler, openAIHandler, startFake } from '../fakes/openai-fake.js';
import { sdkClient, startGateway, type TestGateway, traceId } from '../harness.js';

export interface ApiSetup {
  readonly fake: Fake;
  readonly gateway: TestGateway;
  /** The SDK through the gateway to the fake, with a fresh trace id (returned) and extra headers. */
  client(label: string, headers?: Record<string, string>): { client: OpenAI; trace: string };
  /** The one request the fake received with this trace id (forwarded as `x-test-trace`). */
  received(trace: string): Fake['requests'][number];
  close(): Promise<void>;
}

/** A fake answering every OpenAI endpoint (or `handler`) and a gateway in front of it. */
export async function startApi(handler: FakeHandler = openAIHandler): Promise<ApiSetup> {
  const fake = await startFake(handler);
  const gateway = await startGateway();
  return {
    fake,
    gateway,
    client(label, headers = {}) {
      const trace = traceId(label);
      const client = sdkClient(gateway.url, fake.baseUrl, {
        'x-gateway-trace-id': trace,
        'x-test-trace': trace,
        'x-gateway-forward-headers': ['x-test-trace', ...Object.keys(headers).filter((name) => name.startsWith('x-scenario'))].join(', '),
        ...headers,
      });
      return { client, trace };
    },
    received(trace) {
      const matching = fake.requests.filter((request) => request.headers['x-test-trace'] === trace);
      if (matching.length !== 1) throw new Error(`expected one upstream request for ${trace}, got ${matching.length}`);
      return matching[0];
    },
    async close() {
      await gateway.close();
      await fake.close();
    },
  };
}
