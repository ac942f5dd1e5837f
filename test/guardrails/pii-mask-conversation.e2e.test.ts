import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import OpenAI from 'openai';
import { pii } from '../../plugins/guardrails/index.js';
import { groq } from '../../plugins/providers/groq/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { type ResponsesFake, startResponsesFake } from '../fakes/responses-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin } from '../vault/vault-harness.js';
import { maskModel, type MaskModel } from './mask-fake.js';

/**
 * Issue 37, masking across a Responses conversation (`previous_response_id`), through the official
 * `openai` SDK: the mapping of a turn is sealed by the vault and stored with the response, so the
 * next turn gives a value it met before the same placeholder (`<EMAIL_1>` stays the e-mail), numbers
 * new values on, and restores every placeholder the conversation issued, including in a turn that
 * masks nothing new; a placeholder never issued in the conversation stays as written. The stored
 * conversation holds placeholders only (a streamed answer too), so the model is sent what it saw;
 * neither the values nor the mapping reach the data directory in clear or the log.
 */

const EMAIL = 'ana.lopez@example.com';
const PHONE = '+44 20 7946 0958';
const NEEDLES = [EMAIL, 'ana.lopez', PHONE, '7946 0958', 'bob@example.org'];

let model: MaskModel;
let fake: Fake;
let responsesFake: ResponsesFake;
let gateway: TestGateway;
let dataDir: string;
test.before(async () => {
  model = maskModel();
  fake = await startFake(model.handler);
  responsesFake = await startResponsesFake();
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-mask-conversation-'));
  gateway = await startGateway(
    { providers: [openai(), groq()], policies: { masked: { input: [pii({ action: 'mask' })] } }, defaultPolicy: 'masked' },
    { GATEWAY_DATA_DIR: dataDir },
  );
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
  await responsesFake?.close();
});

const client = (provider: 'groq' | 'openai') =>
  new OpenAI({
    apiKey: PROVIDER_KEY,
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': provider, 'x-gateway-custom-host': provider === 'groq' ? fake.baseUrl : responsesFake.baseUrl },
  });

const leaks = (text: string) => NEEDLES.filter((needle) => text.includes(needle));

/** A streamed turn's text as the SDK assembles it, and the response id. */
async function streamed(sdk: OpenAI, body: { input: string; previous_response_id?: string }): Promise<{ text: string; id: string }> {
  const stream = await sdk.responses.create({ model: 'gpt-4o', stream: true, ...body });
  let text = '';
  let id = '';
  for await (const event of stream) {
    if (event.type === 'response.output_text.delta') text += event.delta;
    if (event.type === 'response.completed') id = event.response.id;
  }
  return { text, id };
}

test.serial('translated to chat: placeholders kept across turns, restored in each, the model sent what it saw', async (t) => {
  const sdk = client('groq');
  // Turn 1, streamed: the answer is restored on its way out and stored as the model wrote it.
  model.script = { pieces: ['Noted <EM', 'AIL_1>.'] };
  const first = await streamed(sdk, { input: `My mail is ${EMAIL}.` });
  t.is(first.text, `Noted ${EMAIL}.`);

  // Turn 2: the same e-mail gets the same placeholder (a new one is numbered on), the phone a new one; the answer names both.
  model.script = { pieces: ['Mail <EMAIL_1>, phone <PHONE_1>.'] };
  const second = await sdk.responses.create({ model: 'gpt-4o', previous_response_id: first.id, input: `Also call ${PHONE}, or mail bob@example.org or ${EMAIL}.` });
  t.is(second.output_text, `Mail ${EMAIL}, phone ${PHONE}.`);
  const sent = JSON.parse(model.seen.at(-1)!) as { messages: Array<{ role: string; content: unknown }> };
  t.deepEqual(leaks(model.seen.at(-1)!), []);
  t.deepEqual(
    sent.messages.map((message) => [message.role, typeof message.content === 'string' ? message.content : (message.content as Array<{ text: string }>).map((part) => part.text).join('')]),
    [
      ['user', 'My mail is <EMAIL_1>.'],
      ['assistant', 'Noted <EMAIL_1>.'],
      ['user', 'Also call <PHONE_1>, or mail <EMAIL_2> or <EMAIL_1>.'],
    ],
  );

  // Turn 3 masks nothing new: the conversation's placeholders are still restored; one never issued is not.
  model.script = { pieces: ['Yes: <EMAIL_1> and <PHONE_1>, <EMAIL_2>, not <EMAIL_3>.'] };
  const third = await streamed(sdk, { input: 'Thanks, is that all?', previous_response_id: second.id });
  t.is(third.text, `Yes: ${EMAIL} and ${PHONE}, bob@example.org, not <EMAIL_3>.`);
  t.deepEqual(leaks(model.seen.at(-1)!), []);
  t.true(model.seen.at(-1)!.includes('Mail <EMAIL_1>, phone <PHONE_1>.'));

  // A conversation without the earlier turn's mapping (another chain: a fresh request) restores nothing of it.
  model.script = { pieces: ['<EMAIL_1>?'] };
  t.is((await sdk.responses.create({ model: 'gpt-4o', input: 'Who am I?' })).output_text, '<EMAIL_1>?');
});

test.serial('native Responses provider: the history goes up with the same placeholders and the answer is restored', async (t) => {
  const sdk = client('openai');
  responsesFake.answer({ kind: 'text', text: 'Noted <EMAIL_1>.' });
  const first = await sdk.responses.create({ model: 'gpt-5-mini', input: `My mail is ${EMAIL}.` });
  t.is(first.output_text, `Noted ${EMAIL}.`);
  responsesFake.answer({ kind: 'text', text: 'Still <EMAIL_1>; <PHONE_1>.' });
  const second = await sdk.responses.create({ model: 'gpt-5-mini', previous_response_id: first.id, input: `Call ${PHONE} or ${EMAIL}.` });
  t.is(second.output_text, `Still ${EMAIL}; ${PHONE}.`);
  const sent = responsesFake.requests.at(-1)!.body.toString();
  t.deepEqual(leaks(sent), []);
  t.true(sent.includes('My mail is <EMAIL_1>.') && sent.includes('Noted <EMAIL_1>.') && sent.includes('Call <PHONE_1> or <EMAIL_1>.'));
});

test.serial('the values and the mapping are in no stored file in clear and in no log', async (t) => {
  await gateway.gateway.flushLogs();
  const files = readdirSync(dataDir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  t.true(files.some((file) => file.name.startsWith('responses')));
  for (const file of files) t.deepEqual(leaks(readFileSync(join(file.parentPath, file.name), 'latin1')), [], file.name);
  t.deepEqual(leaks(gateway.rawLog()), []);
  const listed = await admin(gateway, 'GET', '/admin/logs?limit=50');
  const details = await Promise.all((listed.json.data as Array<{ id: string }>).map((row) => admin(gateway, 'GET', `/admin/logs/${row.id}`)));
  for (const detail of details) t.deepEqual(leaks(detail.text), []);
});
