import { Readable } from 'node:stream';
import test from 'ava';
import { type ObservedUsage, tapUsage } from './usage-tap.js';

/** Streams `chunks` through the tap and returns what it passed on and the usage it observed. */
async function tap(chunks: string[], contentType: string): Promise<{ text: string; observed: ObservedUsage[] }> {
  const observed: ObservedUsage[] = [];
  const tapped = tapUsage(Readable.from(chunks.map((chunk) => Buffer.from(chunk))), contentType, (usage) => observed.push(usage));
  const received: Buffer[] = [];
  for await (const chunk of tapped) received.push(chunk as Buffer);
  return { text: Buffer.concat(received).toString('utf8'), observed };
}

const usage = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 };

test('the usage of an SSE stream is read by the SSE rules: CR line endings, multi-line data', async (t) => {
  const carriageReturns = [`data: {"model":"m1","choices":[]}\r\r`, `data: {"model":"m1","usage":${JSON.stringify(usage)}}\r\r`, 'data: [DONE]\r\r'];
  const read = await tap(carriageReturns, 'text/event-stream');
  t.is(read.text, carriageReturns.join(''), 'bytes unchanged');
  t.deepEqual(read.observed, [{ usage, model: 'm1' }]);
  const multiLine = [`event: message_delta\ndata: {"type":"message_delta",\ndata: "usage":{"input_tokens":7,"output_tokens":3}}\n\n`];
  t.deepEqual((await tap(multiLine, 'text/event-stream; charset=utf-8')).observed, [
    { usage: { input_tokens: 7, output_tokens: 3, prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } },
  ]);
});

test('only the last 64 KiB of a long stream are kept; its usage is still found', async (t) => {
  const filler = Array.from({ length: 400 }, (_, index) => `data: {"choices":[{"delta":{"content":"${'x'.repeat(300)}${index}"}}]}\n\n`);
  const read = await tap([...filler, `data: {"model":"m2","usage":${JSON.stringify(usage)}}\n\n`, 'data: [DONE]\n\n'], 'text/event-stream');
  t.deepEqual(read.observed, [{ usage, model: 'm2' }]);
});

test('a JSON answer reports its usage; other bodies are passed on untouched', async (t) => {
  t.deepEqual((await tap([`{"model":"m3","usage":${JSON.stringify(usage)}}`], 'application/json')).observed, [{ usage, model: 'm3' }]);
  t.deepEqual((await tap(['not json'], 'application/json')).observed, []);
  t.deepEqual((await tap(['bytes'], 'audio/mpeg')).observed, []);
});
