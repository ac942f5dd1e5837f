import { chmodSync, copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { startGateway, type TestGateway } from '../harness.js';

// A data directory written by the release before teams (test/fixtures/data-dir-0.1, made with
// commit 28543e3: a credential, a stored route, a key bound to the credential, a key naming the
// route) opens with today's code: everything belongs to the `default` team, and both keys still
// reach the provider with the sealed credential.

const FIXTURE = join(process.cwd(), 'test/fixtures/data-dir-0.1');
const facts = JSON.parse(readFileSync(join(FIXTURE, 'fixture.json'), 'utf8')) as Record<string, string>;
const received: Array<{ authorization?: string; body: string }> = [];
let upstream: Server;
let gw: TestGateway;

test.before(async () => {
  // The provider the fixture's key and route point at (a fixed loopback port, written in the fixture).
  upstream = createServer(async (request: IncomingMessage, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    received.push({ authorization: request.headers.authorization, body });
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'still here' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }));
  });
  upstream.listen(Number(new URL(facts.upstream!).port), '127.0.0.1');
  await once(upstream, 'listening');
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-migration-'));
  for (const file of ['gateway.sqlite', 'master.key']) {
    copyFileSync(join(FIXTURE, file), join(dataDir, file));
    chmodSync(join(dataDir, file), 0o600);
  }
  chmodSync(dataDir, 0o700);
  gw = await startGateway({}, { GATEWAY_DATA_DIR: dataDir, GATEWAY_API_KEY: facts.accountKey! });
});

test.after.always(async () => {
  await gw?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

const admin = async (path: string) => (await fetch(`${gw.url}${path}`, { headers: { 'x-gateway-api-key': facts.accountKey! } })).json() as Promise<any>;

test.serial('what was stored before teams belongs to the default team', async (t) => {
  t.true((await admin('/admin/teams')).data.some((team: { id: string }) => team.id === 'default'));
  t.is((await admin(`/admin/credentials/${facts.credential}`)).team_id, 'default');
  t.is((await admin(`/admin/virtual-keys/${facts.keyId}`)).team_id, 'default');
  t.like(await admin(`/admin/routes/${facts.route}`), { id: facts.route, name: 'fixture-route' });
  const listed = await admin('/admin/virtual-keys');
  t.deepEqual(listed.data.map((key: { id: string }) => key.id).sort(), [facts.keyId, facts.routedKeyId].sort());
});

test.serial('both keys still work: the bound key and the routed key reach the provider with the sealed credential', async (t) => {
  for (const key of [facts.key!, facts.routedKey!]) {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    t.is(response.status, 200, await response.clone().text());
    t.is(((await response.json()) as any).choices[0].message.content, 'still here');
    t.is(received.at(-1)!.authorization, 'Bearer sk-fixture-upstream-0123456789');
  }
});
