import type { ServerResponse } from 'node:http';
import test from 'ava';
import OpenAI from 'openai';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { loggedOnce, startGateway, type TestGateway, traceId } from '../harness.js';
import { chatWithKey, createKey, FIXED_MESSAGES, FIXED_USAGE, fixedUsageHandler } from './vault-harness.js';

/**
 * Tokens per minute (estimated at admission, corrected by the answer's usage, streams included),
 * the `x-ratelimit-*` headers of admitted answers, and the official SDK's back-off reading a
 * refusal's headers (docs/limits.md#levels).
 */
let fake: Fake;
let slow: Fake;
let gateway: TestGateway;

/** The fixed usage (70 tokens), as one JSON answer or a stream whose last chunk carries it. */
function usageHandler(request: RecordedRequest, response: ServerResponse) {
  const body = request.json();
  if (!body.stream) return fixedUsageHandler(0)(request, response);
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (fields: object) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', ...fields })}\n\n`;
  response.write(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] }));
  response.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  response.write(chunk({ choices: [], usage: FIXED_USAGE }));
  response.end('data: [DONE]\n\n');
}

test.before(async () => {
  fake = await startFake(usageHandler);
  slow = await startFake(fixedUsageHandler(700));
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
  await slow?.close();
});

/** Sends a request and waits for its log entry (written after its settlement). */
async function settled(key: string, body: Record<string, unknown>) {
  const trace = traceId('tpm');
  // The whole answer (a stream to its end) is read before the log entry is awaited.
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, 'x-gateway-trace-id': trace },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES, ...body }),
  });
  const text = await response.text();
  await loggedOnce(gateway, trace);
  return { status: response.status, headers: response.headers, text };
}

for (const stream of [false, true]) {
  test.serial(`tokens per minute${stream ? ', streamed' : ''}: the estimate counts at admission and the usage replaces it at settlement`, async (t) => {
    const { key } = await createKey(t, gateway, { name: `tpm-${stream}`, provider: 'openai', provider_key: 'sk-tpm-secret-0123456789', custom_host: fake.baseUrl, limits: { tokens_per_minute: 200 } });
    // 60 prompt bytes ≈ 15 tokens + max_tokens 100: an estimate of 115; the answer reports 70.
    const body = { max_tokens: 100, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) };
    const first = await settled(key, body);
    t.is(first.status, 200);
    t.is(first.headers.get('x-ratelimit-limit-tokens'), '200');
    t.is(first.headers.get('x-ratelimit-remaining-tokens'), String(200 - 115), 'what is left after this request\'s estimate');
    t.regex(first.headers.get('x-ratelimit-reset-tokens') ?? '', /^\d+(ms|s)$/);
    // Uncorrected, 115 + 115 would pass 200; corrected, 70 + 115 = 185 fits.
    const second = await settled(key, body);
    t.is(second.status, 200, second.text);
    if (stream) t.regex(second.text, /"usage":\{"prompt_tokens":60,"completion_tokens":10/);
    t.is(second.headers.get('x-ratelimit-remaining-tokens'), String(200 - 70 - 115));
    // 70 + 70 + 115 = 255: refused, naming the key's tokens per minute.
    const third = await chatWithKey(gateway, key, body);
    t.is(third.status, 429);
    t.like(third.json.error, { code: 'tokens_per_minute_exceeded', budget: { level: 'key', limit: 'tokens_per_minute', limit_value: 200, used: 140, request_tokens: 115 } });
    t.is(third.headers.get('x-ratelimit-remaining-tokens'), '60');
    t.truthy(third.headers.get('retry-after'));
  });
}

test.serial('a request whose estimate alone exceeds the tokens per minute is refused with a message saying so', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'tpm-alone', provider: 'openai', provider_key: 'sk-tpm-secret-0123456789', custom_host: fake.baseUrl, limits: { tokens_per_minute: 50 } });
  const refused = await chatWithKey(gateway, key, { max_tokens: 100, messages: FIXED_MESSAGES });
  t.is(refused.status, 429);
  t.regex(refused.json.error.message, /limit of 50 tokens per minute is smaller than this request's estimate \(115 tokens\): lower max_tokens/);
});

test.serial('admitted answers carry OpenAI\'s x-ratelimit-*-requests headers of the tightest level', async (t) => {
  const team = await fetch(`${gateway.url}/admin/teams`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': 'gw-test-account-key-0123456789' },
    body: JSON.stringify({ name: `tight-${process.pid}`, limits: { requests_per_minute: 3 } }),
  }).then((response) => response.json() as Promise<{ id: string }>);
  const { key } = await createKey(t, gateway, { name: 'rpm-headers', provider: 'openai', provider_key: 'sk-rpm-secret-0123456789', custom_host: fake.baseUrl, team_id: team.id, limits: { requests_per_minute: 100 } });
  const answer = await chatWithKey(gateway, key);
  t.is(answer.status, 200);
  t.is(answer.headers.get('x-ratelimit-limit-requests'), '3', 'the team\'s 3 is tighter than the key\'s 100');
  t.is(answer.headers.get('x-ratelimit-remaining-requests'), '2');
  t.regex(answer.headers.get('x-ratelimit-reset-requests') ?? '', /^\d+(ms|s)$/);
});

test.serial('the official openai SDK reads a refusal\'s headers, waits and succeeds (max_concurrent 1, two calls at once)', async (t) => {
  const { id, key } = await createKey(t, gateway, { name: 'sdk-backoff', provider: 'openai', provider_key: 'sk-sdk-secret-0123456789', custom_host: slow.baseUrl, limits: { max_concurrent: 1 } });
  const client = new OpenAI({ apiKey: 'unused', baseURL: `${gateway.url}/v1`, defaultHeaders: { 'x-gateway-api-key': key }, maxRetries: 5 });
  const answers = await Promise.all([0, 1].map(() => client.chat.completions.create({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES, max_tokens: 10 })));
  t.deepEqual(
    answers.map((answer) => answer.choices[0]?.message.content),
    ['ok', 'ok'],
  );
  const entries = gateway.entries().filter((entry) => entry.caller === `virtual-key:${id}`);
  t.true(entries.some((entry) => entry.status === 429), 'one call was refused at first');
  t.is(entries.filter((entry) => entry.status === 200).length, 2);
});
