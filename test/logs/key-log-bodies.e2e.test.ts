import test from 'ava';
import OpenAI from 'openai';
import type { LogRecord } from '../../core/logs/record.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';

// A virtual key's `log_bodies: false` keeps its bodies out of the request log, whatever the
// global setting; the global off switch wins over a key's true.

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake();
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const keyClient = (target: TestGateway, key: string, trace: string) =>
  new OpenAI({ apiKey: 'unused-by-the-gateway', baseURL: `${target.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': key, 'x-gateway-trace-id': trace } });

/** The detail (with bodies) of every entry logged for a trace id, oldest first. */
async function logged(target: TestGateway, trace: string): Promise<Array<LogRecord & { request_body: string | null; response_body: string | null }>> {
  await target.gateway.flushLogs();
  const list = await admin(target, 'GET', `/admin/logs?trace_id=${encodeURIComponent(trace)}`);
  const rows = (list.json.data as LogRecord[]).reverse();
  return Promise.all(rows.map(async (row) => (await admin(target, 'GET', `/admin/logs/${row.id}`)).json));
}

const keyBody = (name: string, extra: Record<string, unknown> = {}) => ({ name, provider: 'openai', provider_key: PROVIDER_KEY, custom_host: fake.baseUrl, ...extra });

test.serial('a key with log_bodies false has no bodies logged, another key has them; PATCH flips it', async (t) => {
  const suffix = Math.random().toString(36).slice(2, 8);
  const quiet = await createKey(t, gateway, keyBody(`quiet-${suffix}`, { log_bodies: false }));
  const chatty = await createKey(t, gateway, keyBody(`chatty-${suffix}`));

  const quietTrace = traceId('key-quiet');
  const chattyTrace = traceId('key-chatty');
  await keyClient(gateway, quiet.key, quietTrace).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'private words' }] });
  // A stream too: its answer is tapped by the capture hook, which must leave it alone.
  const stream = await keyClient(gateway, quiet.key, quietTrace).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'private stream' }], stream: true });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? '';
  t.true(streamed.length > 0, 'the stream still reaches the client');
  await keyClient(gateway, chatty.key, chattyTrace).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'public words' }] });

  const quietEntries = await logged(gateway, quietTrace);
  t.is(quietEntries.length, 2);
  for (const entry of quietEntries) {
    t.like(entry, { key_id: quiet.id, status: 200 });
    t.is(entry.request_body, null);
    t.is(entry.response_body, null);
  }
  t.true(quietEntries[1].streaming);
  const [chattyEntry] = await logged(gateway, chattyTrace);
  t.like(chattyEntry, { key_id: chatty.id, status: 200 });
  t.is(JSON.parse(chattyEntry.request_body!).messages[0].content, 'public words');
  t.is(JSON.parse(chattyEntry.response_body!).choices[0].message.content, 'Hello! How can I assist you today?');

  // Flip both: the change applies to the next request at once (the admin API evicts the cached key).
  t.is((await admin(gateway, 'PATCH', `/admin/virtual-keys/${quiet.id}`, { log_bodies: true })).json.log_bodies, true);
  t.is((await admin(gateway, 'PATCH', `/admin/virtual-keys/${chatty.id}`, { log_bodies: false })).json.log_bodies, false);
  const afterQuiet = traceId('key-quiet-flipped');
  const afterChatty = traceId('key-chatty-flipped');
  await keyClient(gateway, quiet.key, afterQuiet).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'now logged' }] });
  await keyClient(gateway, chatty.key, afterChatty).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'now private' }] });
  const [nowLogged] = await logged(gateway, afterQuiet);
  t.is(JSON.parse(nowLogged.request_body!).messages[0].content, 'now logged');
  t.truthy(nowLogged.response_body);
  const [nowPrivate] = await logged(gateway, afterChatty);
  t.is(nowPrivate.request_body, null);
  t.is(nowPrivate.response_body, null);
});

test.serial('a refused request (expired key) with log_bodies false logs the error but not the body', async (t) => {
  const suffix = Math.random().toString(36).slice(2, 8);
  // A key cannot be created already expired: it is created to expire 300 ms from now, then used after that.
  const expired = await createKey(t, gateway, keyBody(`expired-${suffix}`, { log_bodies: false, expires_at: new Date(Date.now() + 300).toISOString() }));
  await new Promise((resolve) => setTimeout(resolve, 400));
  const trace = traceId('key-expired');
  await t.throwsAsync(keyClient(gateway, expired.key, trace).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'secret plans' }] }), {
    instanceOf: OpenAI.AuthenticationError,
  });
  const [entry] = await logged(gateway, trace);
  t.like(entry, { status: 401, error_type: 'authentication_error' });
  t.is(entry.request_body, null);
  t.is(entry.response_body, null);
});

test.serial('the global off switch wins over a key whose log_bodies is true', async (t) => {
  const off = await startGateway({}, { GATEWAY_LOG_BODIES: 'false' });
  try {
    const key = await createKey(t, off, keyBody('loud', { log_bodies: true }));
    const trace = traceId('global-off');
    await keyClient(off, key.key, trace).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const [entry] = await logged(off, trace);
    t.like(entry, { key_id: key.id, status: 200 });
    t.is(entry.request_body, null);
    t.is(entry.response_body, null);
  } finally {
    await off.close();
  }
});

test.serial('admin answers carry log_bodies but no key value or provider secret', async (t) => {
  const listing = await admin(gateway, 'GET', '/admin/virtual-keys');
  t.true(listing.json.data.length >= 2);
  for (const key of listing.json.data) t.is(typeof key.log_bodies, 'boolean');
  t.false(listing.text.includes(PROVIDER_KEY));
  t.false(listing.text.includes(ACCOUNT_KEY));
});
