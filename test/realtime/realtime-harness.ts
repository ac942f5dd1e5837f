import { connect, type Socket } from 'node:net';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { WebSocket } from 'ws';

/** The model every session names; priced in the tests' configuration ($1 and $2 per million tokens). */
export const MODEL = 'gpt-realtime-test';
export const PRICING = { models: { openai: { [MODEL]: { input: 1, output: 2 } } } };

/** What a session's client saw: every event, and how it closed. */
export interface ClientSession {
  readonly rt: OpenAIRealtimeWS;
  readonly events: Array<Record<string, any>>;
  readonly errors: unknown[];
  /** Resolves with the close code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** The gateway's upgrade answer's headers. */
  readonly upgradeHeaders: Promise<Record<string, unknown>>;
  /** Resolves with the first event of `type` (seen already or to come). */
  next(type: string): Promise<Record<string, any>>;
}

/**
 * The official SDK's Realtime WebSocket client (`openai/realtime/ws`) with a virtual key as its API
 * key, pointed at the gateway. The SDK always dials `wss:`; the connection is handed a plain
 * loopback socket instead (`ws`'s `createConnection`), so the session runs on the gateway's HTTP port.
 */
export function sdkSession(gatewayUrl: string, key: string, model = MODEL): ClientSession {
  const { hostname, port } = new URL(gatewayUrl);
  const client = new OpenAI({ apiKey: key, baseURL: `${gatewayUrl}/v1`, maxRetries: 0 });
  const rt = new OpenAIRealtimeWS({ model, options: { createConnection: (() => connect(Number(port), hostname)) as unknown as (options: object) => Socket } as never }, client);
  const events: Array<Record<string, any>> = [];
  const errors: unknown[] = [];
  const waiters: Array<{ type: string; resolve: (event: Record<string, any>) => void }> = [];
  rt.on('event', (event) => {
    events.push(event as Record<string, any>);
    for (const waiter of waiters.filter((entry) => entry.type === (event as { type: string }).type)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(event as Record<string, any>);
    }
  });
  rt.on('error', (error) => errors.push(error));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => rt.socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const upgradeHeaders = new Promise<Record<string, unknown>>((resolve) => rt.socket.on('upgrade', (response) => resolve(response.headers)));
  return {
    rt,
    events,
    errors,
    closed,
    upgradeHeaders,
    next(type) {
      const seen = events.find((event) => event.type === type);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ type, resolve }));
    },
  };
}

/** A raw `ws` connection to the gateway's Realtime endpoint (a browser's view: subprotocols, no SDK). */
export function rawSession(gatewayUrl: string, options: { protocols?: string[]; headers?: Record<string, string>; model?: string } = {}): WebSocket {
  const url = `${gatewayUrl.replace(/^http/, 'ws')}/v1/realtime?model=${encodeURIComponent(options.model ?? MODEL)}`;
  return new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
}

/** How a raw connection attempt ended: opened (with the chosen subprotocol), or refused with a status and JSON body. */
export function outcomeOf(socket: WebSocket): Promise<{ opened: true; protocol: string } | { opened: false; status: number; body: any; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ opened: true, protocol: socket.protocol }));
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ opened: false, status: response.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: response.headers }));
    });
    socket.once('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

/** Polls `check` until it returns a value other than undefined (state the gateway writes in the background). */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, attempts = 300): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}
