import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import test from 'ava';
import type { LogEntry } from '../../core/logs/entry.js';
import { redactSecrets } from '../../core/redact.js';
import { LogQueue } from '../../core/logs/queue.js';
import { toLogRecord } from '../../core/logs/record.js';
import { SpillFile } from '../../core/logs/spill.js';
import { SqliteLogStore } from '../../core/logs/sqlite-store.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { gatewayHeaders, startGateway } from '../harness.js';
import { makeRecord } from './fixtures.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

const entry = (): LogEntry => ({
  id: randomUUID(),
  time: new Date().toISOString(),
  traceId: `safety-${randomUUID()}`,
  method: 'POST',
  path: '/v1/chat/completions',
  operation: 'chat',
  status: 200,
  outcome: 'ok',
  streaming: false,
  durationMs: 1,
  gatewayMs: 0.5,
  metadata: {},
  guardrails: [],
});

const until = async (condition: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

test('logs.db and its -wal and -shm files are created owner-only (0600)', async (t) => {
  const path = join(mkdtempSync(join(tmpdir(), 'log-modes-')), 'logs.db');
  const store = new SqliteLogStore(path);
  await store.init();
  await store.insert([makeRecord()]);
  try {
    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      t.true(existsSync(file), file);
      t.is(modeOf(file).toString(8), '600', file);
    }
  } finally {
    await store.close();
  }
});

test('an existing world-readable logs.db (and its -wal, -shm) is narrowed to 0600 when opened', async (t) => {
  const path = join(mkdtempSync(join(tmpdir(), 'log-modes-')), 'logs.db');
  const first = new SqliteLogStore(path);
  await first.init();
  await first.insert([makeRecord()]);
  for (const file of [path, `${path}-wal`, `${path}-shm`]) chmodSync(file, 0o644);
  const second = new SqliteLogStore(path);
  await second.init();
  try {
    for (const file of [path, `${path}-wal`, `${path}-shm`]) t.is(modeOf(file).toString(8), '600', file);
  } finally {
    await second.close();
    await first.close();
  }
});

test('spill segments are created owner-only (0600), and segments left by a run are narrowed', async (t) => {
  const directory = join(mkdtempSync(join(tmpdir(), 'log-modes-')), 'spill');
  const spill = new SpillFile(directory, 1024 * 1024);
  await spill.append([makeRecord()]);
  spill.appendSync([makeRecord()]);
  const segments = readdirSync(directory);
  t.true(segments.length > 0);
  for (const name of segments) t.is(modeOf(join(directory, name)).toString(8), '600', name);
  const left = join(directory, 'segment-000000000099.ndjson');
  writeFileSync(left, `${JSON.stringify(makeRecord())}\n`, { mode: 0o644 });
  chmodSync(left, 0o644);
  new SpillFile(directory, 1024 * 1024);
  t.is(modeOf(left).toString(8), '600');
});

test('redaction removes JWTs (three base64url segments starting eyJ)', (t) => {
  const jwt = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
  const unsigned = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.';
  const text = redactSecrets(`session ${jwt}, id_token=${unsigned} and {"jwt":"${jwt}"}`, []);
  t.false(text.includes('eyJ'), text);
  t.is(text, 'session [REDACTED], id_token=[REDACTED] and {"jwt":"[REDACTED]"}');
});

test('redaction removes password=, secret=, token=, api_key= style values in query strings and form bodies', (t) => {
  t.is(
    redactSecrets('/v1/x?user=bob&password=hunter2&api_key=abc123&max_tokens=10&access_token=at-1', []),
    '/v1/x?user=bob&password=[REDACTED]&api_key=[REDACTED]&max_tokens=10&access_token=[REDACTED]',
  );
  t.is(
    redactSecrets('grant_type=password&client_secret=s3cr3t&refresh_token=rt-1&Token=T0k&X-Api-Key=k1', []),
    'grant_type=password&client_secret=[REDACTED]&refresh_token=[REDACTED]&Token=[REDACTED]&X-Api-Key=[REDACTED]',
  );
  t.is(redactSecrets('my Password=Tr0ub4dor here', []), 'my Password=[REDACTED] here');
});

test('redaction removes the values of secret-named JSON members, also inside a JSON string, and leaves token counts', (t) => {
  t.is(
    redactSecrets('{"password": "hunter2", "max_tokens": 100, "api_key":"k-1", "client_secret" : "cs", "token_type":"bearer", "prompt_tokens": 5}', []),
    '{"password": "[REDACTED]", "max_tokens": 100, "api_key":"[REDACTED]", "client_secret" : "[REDACTED]", "token_type":"bearer", "prompt_tokens": 5}',
  );
  t.is(
    redactSecrets('{"arguments":"{\\"password\\": \\"hunter2\\", \\"user\\": \\"bob\\"}"}', []),
    '{"arguments":"{\\"password\\": \\"[REDACTED]\\", \\"user\\": \\"bob\\"}"}',
  );
});

test('redaction looks for secret-named values only where a name ends in = or a quote, in any case', (t) => {
  const prose = 'The token expires at noon; send the password by mail, not as credentials in the api key field.';
  t.is(redactSecrets(prose, []), prose);
  const answer = '{"usage":{"prompt_tokens":19,"completion_tokens":10},"choices":[{"message":{"content":"your secret is safe"}}]}';
  t.is(redactSecrets(answer, []), answer);
  t.is(redactSecrets('{"Access-Key":"AK1","note":"x"}', []), '{"Access-Key":"[REDACTED]","note":"x"}');
  t.is(redactSecrets('CREDENTIALS=abc&x=1', []), 'CREDENTIALS=[REDACTED]&x=1');
  t.is(redactSecrets('{"args":"{\\"Private_Key\\": \\"pk\\"}"}', []), '{"args":"{\\"Private_Key\\": \\"[REDACTED]\\"}"}');
});

test('stored bodies go through the extended redaction', (t) => {
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'log in with password=hunter2 then use eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln' }], api_key: 'plain-value' });
  const record = toLogRecord(entry(), { request: Buffer.from(body), secrets: [] }, 10_000);
  for (const secret of ['hunter2', 'eyJhbGciOiJub25lIn0', 'plain-value']) t.false(String(record.request_body).includes(secret), secret);
});

test('storeUp is false after a failed batch write, through retries, until a write succeeds', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'log-up-'));
  const path = join(directory, 'logs.db');
  const store = new SqliteLogStore(path);
  // A spill file with no room: a failed batch is dropped, so nothing is left to replay and the
  // retries themselves write nothing.
  const dropped: string[] = [];
  const queue = new LogQueue(store, new SpillFile(join(directory, 'spill'), 0), { capacity: 100, batchSize: 10, bodyMaxBytes: 100, retryMs: 10 }, {
    dropped: (_count, reason) => dropped.push(reason),
  });
  queue.start();
  await queue.flush();
  t.true(queue.storeUp);
  const blocker = new DatabaseSync(path);
  blocker.exec('BEGIN EXCLUSIVE');
  try {
    queue.write(entry());
    await until(() => dropped.length > 0);
    for (let sample = 0; sample < 10; sample++) {
      await new Promise((resolve) => setTimeout(resolve, 15)); // past several retries
      t.false(queue.storeUp, `sample ${sample}`);
    }
    blocker.exec('ROLLBACK');
    queue.write(entry());
    await until(() => queue.totals.written === 1);
    t.true(queue.storeUp);
  } finally {
    if (blocker.isTransaction) blocker.exec('ROLLBACK');
    blocker.close();
    await queue.close();
  }
});

let fake: Fake | undefined;
test.after.always(async () => fake?.close());

test('gateway_log_store_up is 0 after a failed batch write and 1 again once a write succeeds', async (t) => {
  fake = await startFake();
  const gateway = await startGateway({ logs: { retryMs: 10, spillMaxBytes: 0 } });
  const chat = () =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gatewayHeaders(fake!.baseUrl, { 'content-type': 'application/json' }),
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    }).then((response) => response.text());
  const storeUp = async () => /^gateway_log_store_up (\d)$/m.exec(await gateway.gateway.metrics.render())?.[1];
  await gateway.gateway.flushLogs();
  const blocker = new DatabaseSync(join(gateway.gateway.config.dataDir, 'logs.db'));
  try {
    t.is(await storeUp(), '1');
    blocker.exec('BEGIN EXCLUSIVE');
    await chat();
    const deadline = Date.now() + 5000;
    while ((await storeUp()) !== '0' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 100)); // ten retry periods
    t.is(await storeUp(), '0');
    blocker.exec('ROLLBACK');
    await chat();
    await gateway.gateway.flushLogs();
    t.is(await storeUp(), '1');
  } finally {
    if (blocker.isTransaction) blocker.exec('ROLLBACK');
    blocker.close();
    await gateway.close();
  }
});
