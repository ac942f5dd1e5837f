import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { type Fake, openAIHandler, startFake } from './fakes/openai-fake.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from './harness.js';
import { openai } from '../plugins/providers/openai/index.js';
import { anthropic } from '../plugins/providers/anthropic/index.js';
import { azureOpenAI } from '../plugins/providers/azure-openai/index.js';

const BIN = join(process.cwd(), 'bin/llm-gateway.js');
const SECRETS = { TEST_OPENAI_KEY_A: 'sk-litellm-secret-aaaaaaaaaaaa', TEST_OPENAI_KEY_B: 'sk-litellm-secret-bbbbbbbbbbbb', TEST_ANTHROPIC_KEY: 'sk-ant-litellm-secret-cccccccc' };
const PORTKEY_SECRETS = ['sk-portkey-secret-111111111111', 'sk-portkey-secret-222222222222', 'sk-ant-portkey-secret-33333333'];

let fake: Fake;

test.before(async () => {
  fake = await startFake(openAIHandler);
});

test.after.always(async () => {
  await fake?.close();
});

/** Runs the package's `llm-gateway` with the environment given (and nothing else of this process's). */
async function gatewayCommand(args: string[], environment: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...environment }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end();
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** A gateway on the data folder the command wrote to: the routes, aliases and credentials it stored are what it serves. */
const gatewayOn = (dataDir: string): Promise<TestGateway> => startGateway({ providers: [openai(), anthropic(), azureOpenAI()] }, { GATEWAY_DATA_DIR: dataDir });

async function chat(gateway: TestGateway, model: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, body: await response.text() };
}

test.serial("import portkey: a config from Portkey's documentation (fallback over a nested load balancer) becomes a stored route the gateway serves; each field not carried is named, no secret printed", async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'gateway-import-portkey-'));
  const dataDir = join(folder, 'data');
  const file = join(folder, 'portkey-config.json');
  // Portkey's "combining routing strategies" pattern: a fallback whose first target is a load balancer.
  const config = {
    strategy: { mode: 'fallback', on_status_codes: [429, 500, 502, 503] },
    retry: { attempts: 2, on_status_codes: [429] },
    cache: { mode: 'semantic', max_age: 600 },
    before_request_hooks: [{ id: 'pii-check' }],
    targets: [
      {
        strategy: { mode: 'loadbalance' },
        targets: [
          { provider: 'openai', api_key: PORTKEY_SECRETS[0], weight: 0.7, custom_host: fake.baseUrl, override_params: { model: 'gpt-4o' } },
          { provider: 'openai', api_key: PORTKEY_SECRETS[1], weight: 0.3, custom_host: fake.baseUrl, override_params: { model: 'gpt-4o-mini' } },
        ],
      },
      { provider: 'anthropic', api_key: PORTKEY_SECRETS[2], override_params: { model: 'claude-3-5-sonnet-20240620' } },
      { virtual_key: 'azure-prod-vk-1a2b3c', override_params: { model: 'gpt-4o' } },
    ],
  };
  writeFileSync(file, JSON.stringify(config));
  const run = await gatewayCommand(['import', 'portkey', file, '--name', 'chat-fallback'], { GATEWAY_DATA_DIR: dataDir });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /stored route chat-fallback \(route_/);
  t.is((run.stdout.match(/stored credential /g) ?? []).length, 3);
  t.regex(run.stdout, /not carried: config\.before_request_hooks: /);
  t.regex(run.stdout, /not carried: config\.cache\.mode: semantic .* carried as simple/);
  t.regex(run.stdout, /not carried: config\.targets\[2\]\.virtual_key: a Portkey virtual key/);
  for (const secret of PORTKEY_SECRETS) t.false(run.stdout.includes(secret) || run.stderr.includes(secret), 'no secret printed');

  const gateway = await gatewayOn(dataDir);
  try {
    const routes = await (await fetch(`${gateway.url}/admin/routes`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).json() as { data: Array<{ name: string; route: any }> };
    const stored = routes.data.find((entry) => entry.name === 'chat-fallback')!.route;
    t.like(stored, { strategy: { mode: 'fallback' }, retry: { attempts: 2 }, cache: { mode: 'simple', max_age: 600 } });
    t.is(stored.targets.length, 2);
    t.like(stored.targets[0].route, { strategy: { mode: 'loadbalance' } });
    t.deepEqual(stored.targets[0].route.targets.map((target: { weight: number }) => target.weight), [0.7, 0.3]);
    t.regex(stored.targets[0].route.targets[0].credential, /^cred_/);
    t.false(JSON.stringify(stored).includes('sk-'), 'the route holds credential ids only');

    const before = fake.requests.length;
    const answer = await chat(gateway, 'anything', { 'x-gateway-config': 'chat-fallback' });
    t.is(answer.status, 200, answer.body);
    const sent = fake.requests.slice(before)[0];
    t.true([`Bearer ${PORTKEY_SECRETS[0]}`, `Bearer ${PORTKEY_SECRETS[1]}`].includes(String(sent.headers.authorization)), 'the stored credential is sent upstream');
    t.true(['gpt-4o', 'gpt-4o-mini'].includes(sent.json().model));
  } finally {
    await gateway.close();
  }
});

test.serial("import litellm: a proxy config from LiteLLM's documentation becomes credentials (os.environ/ read now), one route per model group, an alias each, fallbacks; what has no counterpart is named", async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'gateway-import-litellm-'));
  const dataDir = join(folder, 'data');
  const file = join(folder, 'config.yaml');
  writeFileSync(
    file,
    `model_list:
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o
      api_key: os.environ/TEST_OPENAI_KEY_A
      api_base: ${fake.baseUrl}
      rpm: 60
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o-2024-08-06
      api_key: os.environ/TEST_OPENAI_KEY_B
      api_base: ${fake.baseUrl}
      weight: 2
  - model_name: claude-3-5-sonnet
    litellm_params:
      model: anthropic/claude-3-5-sonnet-20240620
      api_key: os.environ/TEST_ANTHROPIC_KEY
  - model_name: azure-gpt
    litellm_params:
      model: azure/chatgpt-v-2
      api_base: https://my-endpoint-europe.openai.azure.com
      api_version: "2024-02-15-preview"
      api_key: os.environ/AZURE_API_KEY_UNSET
    model_info:
      mode: chat
  - model_name: local-llama
    litellm_params:
      model: huggingface/meta-llama/Llama-3-8B
router_settings:
  routing_strategy: least-busy
  num_retries: 2
  timeout: 30
litellm_settings:
  drop_params: true
  fallbacks: [{"gpt-4o": ["claude-3-5-sonnet"]}]
general_settings:
  master_key: sk-1234
`,
  );
  const run = await gatewayCommand(['import', 'litellm', file], { GATEWAY_DATA_DIR: dataDir, ...SECRETS });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /stored route litellm-gpt-4o \(route_/);
  t.regex(run.stdout, /alias gpt-4o → route litellm-gpt-4o/);
  t.regex(run.stdout, /alias claude-3-5-sonnet → route litellm-claude-3-5-sonnet/);
  t.regex(run.stdout, /alias azure-gpt → route litellm-azure-gpt/);
  t.is((run.stdout.match(/stored credential /g) ?? []).length, 3);
  t.regex(run.stdout, /not carried: model_list\[0\]\.litellm_params\.rpm: /);
  t.regex(run.stdout, /not carried: model_list\[3\]\.litellm_params\.api_key: the environment variable AZURE_API_KEY_UNSET is not set/);
  t.regex(run.stdout, /not carried: model_list\[3\]\.model_info: /);
  t.regex(run.stdout, /not carried: model_list\[4\]\.litellm_params\.model: "huggingface\/meta-llama\/Llama-3-8B" names no provider/);
  t.regex(run.stdout, /not carried: litellm_settings\.drop_params: /);
  t.regex(run.stdout, /not carried: general_settings: /);
  for (const secret of [...Object.values(SECRETS), 'sk-1234']) t.false(run.stdout.includes(secret) || run.stderr.includes(secret), 'no secret printed');

  // Importing again updates the routes in place.
  const again = await gatewayCommand(['import', 'litellm', file], { GATEWAY_DATA_DIR: dataDir, ...SECRETS });
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, /replaced route litellm-gpt-4o/);
  t.deepEqual(
    [...again.stdout.matchAll(/rotated credential (\S+) \((cred_[^)]+)\)/g)].map((match) => match[2]).sort(),
    [...run.stdout.matchAll(/stored credential (\S+) \((cred_[^)]+)\)/g)].map((match) => match[2]).sort(),
    'importing again rotates the credentials it stored before: same ids, none left over',
  );

  const gateway = await gatewayOn(dataDir);
  try {
    const routes = await (await fetch(`${gateway.url}/admin/routes`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).json() as { data: Array<{ name: string; route: any }> };
    const group = routes.data.find((entry) => entry.name === 'litellm-gpt-4o')!.route;
    t.like(group, { strategy: { mode: 'fallback' } });
    t.like(group.targets[0].route, { strategy: { mode: 'loadbalance', policy: 'least_busy' }, retry: { attempts: 2 }, request_timeout: 30_000 });
    t.deepEqual(group.targets[0].route.targets.map((target: { override_params: { model: string } }) => target.override_params.model), ['gpt-4o', 'gpt-4o-2024-08-06']);
    t.is(group.targets[0].route.targets[1].weight, 2);
    t.like(group.targets[1], { name: 'claude-3-5-sonnet' });
    const azure = routes.data.find((entry) => entry.name === 'litellm-azure-gpt')!.route;
    t.deepEqual(azure.targets[0].headers, { 'x-gateway-cloud-a-resource-name': 'my-endpoint-europe', 'x-gateway-cloud-a-deployment-id': 'chatgpt-v-2', 'x-gateway-cloud-a-api-version': '2024-02-15-preview' });
    t.is(azure.targets[0].credential, undefined, 'an unset key stores nothing: the caller\'s Bearer is used');

    const before = fake.requests.length;
    const answer = await chat(gateway, 'gpt-4o');
    t.is(answer.status, 200, answer.body);
    const sent = fake.requests.slice(before)[0];
    t.true([`Bearer ${SECRETS.TEST_OPENAI_KEY_A}`, `Bearer ${SECRETS.TEST_OPENAI_KEY_B}`].includes(String(sent.headers.authorization)), 'the key read from the environment at import is sent');
  } finally {
    await gateway.close();
  }
});

test('import: a usage error exits 2; a file that is not a config exits 1; a config with nothing to import exits 1 naming why', async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'gateway-import-bad-'));
  const dataDir = join(folder, 'data');
  t.is((await gatewayCommand(['import', 'kong', 'x.json'], { GATEWAY_DATA_DIR: dataDir })).code, 2);
  const broken = join(folder, 'broken.json');
  writeFileSync(broken, '{ "api_key": "sk-broken-secret-0123456789" ');
  const unreadable = await gatewayCommand(['import', 'portkey', broken], { GATEWAY_DATA_DIR: dataDir });
  t.is(unreadable.code, 1);
  t.regex(unreadable.stderr, /could not be read as a Portkey config \(JSON\): not valid JSON/);
  const brokenYaml = join(folder, 'broken.yaml');
  writeFileSync(brokenYaml, 'model_list:\n  - model_name: x\n    litellm_params: {api_key: sk-yaml-secret-0123456789\n');
  const unreadableYaml = await gatewayCommand(['import', 'litellm', brokenYaml], { GATEWAY_DATA_DIR: dataDir });
  t.is(unreadableYaml.code, 1);
  t.regex(unreadableYaml.stderr, /could not be read as a LiteLLM config \(YAML\): .* at line \d+, column \d+/);
  for (const run of [unreadable, unreadableYaml]) t.false(/sk-(broken|yaml)-secret/.test(run.stdout + run.stderr), 'a parse error quotes no secret');
  const nothing = join(folder, 'nothing.json');
  writeFileSync(nothing, JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'portkey-only-vk' }] }));
  const empty = await gatewayCommand(['import', 'portkey', nothing], { GATEWAY_DATA_DIR: dataDir });
  t.is(empty.code, 1);
  t.regex(empty.stdout, /not carried: config\.targets\[0\]\.virtual_key/);
  t.regex(empty.stdout, /not carried: config\.targets: no target could be carried over/);
});

test.serial("a Portkey config with a nested target works as it is, inline in x-gateway-config: the nested load balancer's targets are tried", async (t) => {
  const gateway = await startGateway({ providers: [openai()] });
  try {
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        {
          strategy: { mode: 'loadbalance' },
          targets: [
            { provider: 'openai', custom_host: fake.baseUrl, weight: 1, override_params: { model: 'nested-a' } },
            { provider: 'openai', custom_host: fake.baseUrl, weight: 1, override_params: { model: 'nested-b' } },
          ],
        },
        { provider: 'openai', custom_host: fake.baseUrl, override_params: { model: 'backup' } },
      ],
    };
    const before = fake.requests.length;
    const answer = await chat(gateway, 'anything', { 'x-gateway-config': JSON.stringify(config), authorization: 'Bearer sk-inline-portkey-0123456789' });
    t.is(answer.status, 200, answer.body);
    const sent = fake.requests.slice(before);
    t.is(sent.length, 1);
    t.true(['nested-a', 'nested-b'].includes(sent[0].json().model), 'the nested load balancer answered first');
  } finally {
    await gateway.close();
  }
});
