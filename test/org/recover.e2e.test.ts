import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { ACCOUNT_KEY, startGateway } from '../harness.js';

// `auth.accountKey: 'disabled'` turns the account key off for the admin API and the dashboard once
// an owner user exists (not before: nobody is locked out), and `llm-gateway org recover` on the host
// gives an owner a way back in.

const BIN = join(process.cwd(), 'bin/llm-gateway.js');

async function run(args: string[], environment: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...environment }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

test('the account key stops at the admin API once an owner exists; org recover signs an owner back in', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-recover-'));
  const gw = await startGateway({ auth: { accountKey: 'disabled' } }, { GATEWAY_DATA_DIR: dataDir });
  t.teardown(() => gw.close());
  const admin = (path: string, init: RequestInit = {}) => fetch(`${gw.url}${path}`, { ...init, headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });

  // No owner user yet: the account key still works.
  const invited = await admin('/admin/users', { method: 'POST', body: JSON.stringify({ email: 'boss@example.com', role: 'owner' }) });
  t.is(invited.status, 201);
  const { invitation } = (await invited.json()) as { invitation: { url: string } };
  t.is((await fetch(invitation.url, { redirect: 'manual' })).status, 302, 'the owner signs in and becomes active');
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const refused = await admin('/admin/virtual-keys');
  t.is(refused.status, 401);
  t.is(((await refused.json()) as { error: { code: string } }).error.code, 'account_key_disabled');
  const dashboard = await fetch(`${gw.url}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: ACCOUNT_KEY }) });
  t.is(dashboard.status, 401, 'the dashboard refuses it too');

  const recovered = await run(['org', 'recover', '--email', 'boss@example.com', '--json'], { GATEWAY_DATA_DIR: dataDir, GATEWAY_API_KEY: ACCOUNT_KEY, GATEWAY_PUBLIC_URL: gw.url });
  t.is(recovered.code, 0, recovered.stderr);
  const { sign_in_url: url } = JSON.parse(recovered.stdout) as { sign_in_url: string };
  t.true(url.startsWith(`${gw.url}/dashboard/invitations/`));
  const landing = await fetch(url, { redirect: 'manual' });
  t.is(landing.status, 302);
  const cookie = landing.headers.get('set-cookie')!.split(';')[0]!;
  const session = (await (await fetch(`${gw.url}/dashboard/session`, { headers: { cookie } })).json()) as { csrf_token: string };
  const me = await fetch(`${gw.url}/admin/me`, { headers: { cookie, 'x-gateway-csrf': session.csrf_token } });
  t.is(me.status, 200);
  t.is(((await me.json()) as { user: { role: string } }).user.role, 'owner');

  const usage = await run(['org', 'recover'], { GATEWAY_DATA_DIR: dataDir, GATEWAY_API_KEY: ACCOUNT_KEY });
  t.is(usage.code, 2);
  t.regex(usage.stderr, /--email/);
});
