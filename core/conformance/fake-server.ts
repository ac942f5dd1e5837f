import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ImageScenario, ProviderFakeRenderer, ReceivedRequest, RenderedAnswer, RerankScenario, Scenario, SpeechScenario, TranscriptionScenario } from '../spec/conformance.js';

/** Any scenario the kit sets: the chat-family ones and each other operation's. */
export type AnyScenario = Scenario | RerankScenario | ImageScenario | SpeechScenario | TranscriptionScenario;

/** A loopback HTTP server that answers every request with the current scenario, through the subject's renderer. */
export interface ScenarioServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** `origin + '/v1'`: the kit's `x-gateway-custom-host`. */
  readonly baseUrl: string;
  /** Every request received, in order. */
  readonly received: ReceivedRequest[];
  /** What the next requests are answered with. */
  scenario: AnyScenario | undefined;
  close(): Promise<void>;
}

const lowerCased = (headers: NodeJS.Dict<string | string[]>): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value]));

/** The renderer's answer to `scenario`: an operation's own scenario goes to that operation's renderer only. */
function renderAnswer(renderer: ProviderFakeRenderer, scenario: AnyScenario, request: ReceivedRequest, operation: string, stream: boolean): RenderedAnswer {
  if (scenario.kind === 'rerank') {
    if (operation !== 'rerank' || !renderer.renderRerank) throw new Error(`a rerank scenario for a ${operation} request`);
    return renderer.renderRerank(scenario, request);
  }
  if (scenario.kind === 'image') {
    if (operation !== 'image' || !renderer.renderImage) throw new Error(`an image scenario for a ${operation} request`);
    return renderer.renderImage(scenario, request);
  }
  if (scenario.kind === 'speech') {
    if (operation !== 'speech' || !renderer.renderSpeech) throw new Error(`a speech scenario for a ${operation} request`);
    return renderer.renderSpeech(scenario, request);
  }
  if (scenario.kind === 'transcription') {
    if (operation !== 'transcription' || !renderer.renderTranscription) throw new Error(`a transcription scenario for a ${operation} request`);
    return renderer.renderTranscription(scenario, request);
  }
  return renderer.render(scenario, request, stream);
}

export async function startScenarioServer(renderer: ProviderFakeRenderer): Promise<ScenarioServer> {
  const received: ReceivedRequest[] = [];
  const state: { scenario: AnyScenario | undefined } = { scenario: undefined };
  const server = createServer(async (incoming, response) => {
    const parts: Buffer[] = [];
    try {
      for await (const part of incoming) parts.push(part as Buffer);
    } catch {
      return;
    }
    const request: ReceivedRequest = { method: incoming.method ?? '', url: incoming.url ?? '', headers: lowerCased(incoming.headers), body: Buffer.concat(parts) };
    received.push(request);
    try {
      const { operation, stream } = renderer.classify(request);
      if (operation === 'other' || state.scenario === undefined) {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `the conformance fake has no answer for ${request.method} ${request.url}` } }));
        return;
      }
      const answer = renderAnswer(renderer, state.scenario, request, operation, stream);
      response.writeHead(answer.status, answer.headers);
      response.flushHeaders();
      for (const chunk of answer.chunks) {
        if (response.destroyed) return;
        response.write(chunk);
        // Each piece is its own write, so framing arrives split across reads.
        await new Promise((resolve) => setImmediate(resolve));
      }
      response.end();
    } catch (error) {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: `the conformance fake's renderer failed: ${(error as Error).message}` } }));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    baseUrl: `${origin}/v1`,
    received,
    get scenario() {
      return state.scenario;
    },
    set scenario(value) {
      state.scenario = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
