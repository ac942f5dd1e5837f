// `npm run build && npx node dist/bench/messages.js` (also run by `npm run bench`): what the Messages
// protocol layer and the Gemini API's (`generateContent`) cost over chat on a translated provider. One gateway (OpenAI provider, default
// config, its log written and stored) and a mock upstream run in this process; the same prompt is
// sent as `POST /v1/chat/completions`, as `POST /v1/messages` and as `:generateContent`
// (`:streamGenerateContent?alt=sse`), plain and streamed, in
// alternating rounds, and the main thread's CPU time per request is compared (median of the rounds):
// client, mock and log work is the same on both sides, so the difference is the protocol layer
// (validation, translation to chat, the Message or its events). Prints figures and PASS/MISS
// against issue 17's and issue 36's 30 µs (a MISS does not fail the run).
import { mkdtempSync } from 'node:fs';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway } from '../core/app.js';
import { openai } from '../plugins/providers/openai/index.js';

const ROUNDS = 15;
const REQUESTS = 2000;
const GOAL_US = 30;
const ACCOUNT_KEY = 'gw-bench-messages-0123456789';
const PROMPT =
  'Please draft a short, friendly reply to the customer who wrote about order 4471: apologise for the delay, confirm delivery next Tuesday and offer a 10% discount. Thank you.';
const TEXT = 'Dear customer, we are sorry for the delay. Your order 4471 arrives next Tuesday, and here is a 10% discount for your patience.';

const answer = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: TEXT, refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 41, completion_tokens: 30, total_tokens: 71 },
});
const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage: unknown = null, choices = true) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: choices ? [{ index: 0, delta, logprobs: null, finish_reason: finish }] : [], usage })}\n\n`;
const words = TEXT.split(/(?<= )/);
const stream = [
  chunk({ role: 'assistant', content: '' }),
  ...words.map((word) => chunk({ content: word })),
  chunk({}, 'stop'),
  chunk({}, null, { prompt_tokens: 41, completion_tokens: 30, total_tokens: 71 }, false),
  'data: [DONE]\n\n',
].join('');

async function main(): Promise<void> {
  const mock = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const streamed = Buffer.concat(parts).includes('"stream":true');
      response.writeHead(200, { 'content-type': streamed ? 'text/event-stream' : 'application/json' }).end(streamed ? stream : answer);
    });
  });
  await new Promise<void>((resolve) => mock.listen(0, '127.0.0.1', resolve));
  const mockUrl = `http://127.0.0.1:${(mock.address() as AddressInfo).port}/v1`;
  const gateway = createGateway(
    { providers: [openai()] },
    { environment: { GATEWAY_API_KEY: ACCOUNT_KEY, GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'bench-messages-')), LOG_LEVEL: 'info' }, logDestination: { write() {} } },
  );
  const { url } = await gateway.listen(0, '127.0.0.1');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mockUrl, authorization: 'Bearer sk-bench' };

  const post = (path: string, body: string) =>
    new Promise<void>((resolve, reject) => {
      const request = httpRequest(`${url}${path}`, { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`${path} answered ${response.statusCode}`));
        response.resume();
        response.once('end', resolve);
      });
      request.once('error', reject);
      request.end(body);
    });

  // This body is both a valid chat request and a valid Messages request: only the route differs.
  // The Gemini API's carries the same prompt and output bound in Google's shape.
  type Kind = 'chat' | 'messages' | 'gemini';
  const bodyOf = (kind: Kind, streamed: boolean) =>
    kind === 'gemini'
      ? JSON.stringify({ contents: [{ role: 'user', parts: [{ text: PROMPT }] }], generationConfig: { maxOutputTokens: 256 } })
      : JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 256, messages: [{ role: 'user', content: PROMPT }], ...(streamed ? { stream: true } : {}) });
  const pathOf = (kind: Kind, streamed: boolean) =>
    kind === 'chat' ? '/v1/chat/completions' : kind === 'messages' ? '/v1/messages' : `/v1beta/models/gpt-4o-mini:${streamed ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;

  const cpuPerRequest = async (kind: Kind, streamed: boolean): Promise<number> => {
    const body = bodyOf(kind, streamed);
    const path = pathOf(kind, streamed);
    const before = process.threadCpuUsage();
    for (let index = 0; index < REQUESTS; index++) await post(path, body);
    const used = process.threadCpuUsage(before);
    return (used.user + used.system) / REQUESTS;
  };

  const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)];
  const lines: string[] = [];
  let worst = 0;
  for (const protocol of ['messages', 'gemini'] as const) {
    for (const streamed of [false, true]) {
      for (const kind of ['chat', protocol] as const) for (let index = 0; index < 500; index++) await post(pathOf(kind, streamed), bodyOf(kind, streamed));
      const chat: number[] = [];
      const other: number[] = [];
      const differences: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate the order so drift (GC, JIT, the log store) falls on both sides.
        const first = round % 2 === 0 ? 'chat' : protocol;
        const a = await cpuPerRequest(first, streamed);
        const b = await cpuPerRequest(first === 'chat' ? protocol : 'chat', streamed);
        const [chatUs, otherUs] = first === 'chat' ? [a, b] : [b, a];
        chat.push(chatUs);
        other.push(otherUs);
        differences.push(otherUs - chatUs);
      }
      const extra = median(differences);
      worst = Math.max(worst, extra);
      const label = streamed ? 'streamed' : 'plain';
      lines.push(`  ${protocol.padEnd(8)} ${label.padEnd(9)} chat ${median(chat).toFixed(1)} µs, ${protocol} ${median(other).toFixed(1)} µs, ${protocol} − chat ${extra.toFixed(1)} µs per request`);
    }
  }
  process.stdout.write(`Messages and the Gemini API → OpenAI-compatible provider vs chat: main-thread CPU per request (median of ${ROUNDS} rounds of ${REQUESTS}; gateway, client and mock share the thread, the log store's worker is left out)\n`);
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(`  goal: at most ${GOAL_US} µs more than chat: ${worst <= GOAL_US ? 'PASS' : 'MISS'} (${worst.toFixed(1)} µs)\n`);
  agent.destroy();
  await gateway.close();
  mock.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/messages failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
