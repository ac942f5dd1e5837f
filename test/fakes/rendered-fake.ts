import type { ProviderFakeRenderer, ReceivedRequest, Scenario } from '../../core/conformance/index.js';
import { type Fake, type RecordedRequest, startFake } from './openai-fake.js';

/** A loopback fake of a provider's HTTP API that answers each request with the next scenario, in the provider's wire format. */
export interface RenderedFake extends Fake {
  /** Queues the answers of the next requests, in order (the last one repeats). */
  answer(...scenarios: Scenario[]): void;
  /** The received request's body as JSON. */
  body(index: number): Record<string, any>;
}

const received = (request: RecordedRequest): ReceivedRequest => ({
  method: request.method,
  url: request.url,
  headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value])),
  body: request.body,
});

/** Starts a fake whose answers come from `renderer`; each chunk is a separate write (framing split across reads). */
export async function startRenderedFake(renderer: ProviderFakeRenderer): Promise<RenderedFake> {
  let queue: Scenario[] = [];
  const fake = await startFake(async (request, response) => {
    const scenario = queue.length > 1 ? queue.shift()! : queue[0];
    if (!scenario) {
      response.writeHead(500).end('no scenario queued');
      return;
    }
    const incoming = received(request);
    const answer = renderer.render(scenario, incoming, renderer.classify(incoming).stream);
    response.writeHead(answer.status, answer.headers);
    for (const chunk of answer.chunks) {
      response.write(chunk);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    response.end();
  });
  return {
    ...fake,
    answer(...scenarios) {
      queue = [...scenarios];
    },
    body: (index) => fake.requests[index].json(),
  };
}
