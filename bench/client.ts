import { type Agent, type IncomingMessage, request as httpRequest } from 'node:http';

/** Where and what to send. */
export interface Target {
  url: string;
  headers: Record<string, string>;
  body: string;
  agent: Agent;
}

/** Client-side timing of one streamed response, in ms from the moment the request was sent. */
export interface StreamTiming {
  /** performance.now() when the request was sent (the origin of the other figures). */
  sentAt: number;
  status: number;
  headersMs: number;
  firstByteMs: number;
  firstContentMs: number;
  contentEvents: number;
  /** Gaps between consecutive content events as they reached the client. */
  gapsMs: number[];
  /** When the response ended. */
  endMs: number;
  sawDone: boolean;
  sawError: boolean;
}

function send(target: Target, limitMs: number, onResponse: (response: IncomingMessage) => void, onError: (error: Error) => void): number {
  const sentAt = performance.now();
  const request = httpRequest(target.url, {
    method: 'POST',
    agent: target.agent,
    headers: { ...target.headers, 'content-length': String(Buffer.byteLength(target.body)) },
    signal: AbortSignal.timeout(limitMs),
  });
  request.once('response', onResponse);
  request.once('error', onError);
  request.end(target.body);
  return sentAt;
}

/** Sends one request and returns its status and body text (the bench's pre-flight check). */
export function postOnce(target: Target, limitMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    send(
      target,
      limitMs,
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.once('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
        response.once('error', reject);
      },
      reject,
    );
  });
}

interface StreamState {
  contentTimes: number[];
  sawDone: boolean;
  sawError: boolean;
}

function readEvent(event: string, arrivedAt: number, state: StreamState): void {
  for (const line of event.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '[DONE]') {
      state.sawDone = true;
      continue;
    }
    let parsed: { error?: unknown; choices?: Array<{ delta?: { content?: string } }> };
    try {
      parsed = JSON.parse(data);
    } catch {
      state.sawError = true;
      continue;
    }
    if (parsed.error) state.sawError = true;
    if (parsed.choices?.[0]?.delta?.content) state.contentTimes.push(arrivedAt);
  }
}

function gapsBetween(times: number[]): number[] {
  const gaps: number[] = [];
  for (let index = 1; index < times.length; index++) gaps.push(times[index] - times[index - 1]);
  return gaps;
}

/**
 * Sends one streaming request and times, on the client, the response headers, the first body byte,
 * the first content event, and the spacing of content events; the whole exchange is bounded by `limitMs`.
 */
export function timeStream(target: Target, limitMs: number): Promise<StreamTiming> {
  return new Promise((resolve, reject) => {
    const state: StreamState = { contentTimes: [], sawDone: false, sawError: false };
    let sentAt = 0;
    const onResponse = (response: IncomingMessage): void => {
      const headersAt = performance.now();
      let firstByteAt: number | undefined;
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        const arrivedAt = performance.now();
        firstByteAt ??= arrivedAt;
        buffer += text;
        for (let boundary = buffer.indexOf('\n\n'); boundary !== -1; boundary = buffer.indexOf('\n\n')) {
          readEvent(buffer.slice(0, boundary), arrivedAt, state);
          buffer = buffer.slice(boundary + 2);
        }
      });
      response.once('error', reject);
      response.once('end', () =>
        resolve({
          sentAt,
          status: response.statusCode ?? 0,
          headersMs: headersAt - sentAt,
          firstByteMs: (firstByteAt ?? Number.NaN) - sentAt,
          firstContentMs: (state.contentTimes[0] ?? Number.NaN) - sentAt,
          contentEvents: state.contentTimes.length,
          gapsMs: gapsBetween(state.contentTimes),
          endMs: performance.now() - sentAt,
          sawDone: state.sawDone,
          sawError: state.sawError,
        }),
      );
    };
    sentAt = send(target, limitMs, onResponse, reject);
  });
}
