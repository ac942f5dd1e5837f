/**
 * Run by isolation.vault.test.ts in a child process whose environment carries GATEWAY_MASTER_KEY:
 * starts a gateway from process.env, creates a virtual key, serves a request with it (so a
 * credential is decrypted and cached), then writes a heap snapshot of this (the request) thread.
 */
import { writeHeapSnapshot } from 'node:v8';
import { createGateway } from '../../core/app.js';
import { openai } from '../../plugins/providers/openai/index.js';

const gateway = createGateway({ providers: [openai()] }, { logDestination: { write: () => {} } });
const { url } = await gateway.listen(0, '127.0.0.1');
const accountKey = process.env.GATEWAY_API_KEY!;
const created = await fetch(`${url}/admin/virtual-keys`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-gateway-api-key': accountKey },
  body: JSON.stringify({ name: 'isolation', provider: 'openai', provider_key: process.env.TEST_PROVIDER_KEY, custom_host: process.env.TEST_UPSTREAM }),
}).then((response) => response.json() as Promise<{ key: string }>);
delete process.env.TEST_PROVIDER_KEY;
const chat = await fetch(`${url}/v1/chat/completions`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-gateway-api-key': created.key },
  body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
});
await chat.text();
const report = { status: chat.status, masterKeyInEnv: 'GATEWAY_MASTER_KEY' in process.env, snapshot: writeHeapSnapshot(process.env.TEST_SNAPSHOT) };
await gateway.close();
process.stdout.write(`${JSON.stringify(report)}\n`);
