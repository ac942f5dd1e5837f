import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { openai } from '../plugins/providers/openai/index.js';
import { pluginDependencies } from '../test/plugin-dependencies.js';
import { createGateway } from './app.js';
import { BootError } from './errors.js';
import { PluginRegistry } from './registry.js';
import type { GuardrailRegistration } from './spec/guardrail.js';
import type { Hook } from './pipeline/hook.js';
import type { PluginManifest } from './spec/manifest.js';
import type { ProviderRegistration } from './spec/provider.js';

const dependencies = () => pluginDependencies();

const WORD_FILTER_PARAMS = {
  type: 'object',
  additionalProperties: false,
  required: ['words'],
  properties: { words: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } } },
};

/** A minimal guardrail registration; `manifest` overrides are applied as given (even invalid ones). */
function wordFilter(manifest: Record<string, unknown> = {}, params: unknown = { words: ['secret'] }): GuardrailRegistration {
  return {
    manifest: {
      id: 'word-filter',
      kind: 'guardrail',
      version: '0.1.0',
      description: 'Denies requests that contain listed words.',
      stages: ['input'],
      incremental: true,
      params: WORD_FILTER_PARAMS,
      ...manifest,
    } as GuardrailRegistration['manifest'],
    params,
    create: () => ({ id: 'word-filter', sides: ['input'], check: async () => ({ action: 'allow' }) }),
  };
}

/** The OpenAI registration with its manifest changed. */
function openaiWith(manifest: Record<string, unknown>): ProviderRegistration {
  const registration = openai();
  return { ...registration, manifest: { ...registration.manifest, ...manifest } as ProviderRegistration['manifest'] };
}

function bootError(t: ExecutionContext, build: () => unknown, code: BootError['code'], ...mentions: RegExp[]): BootError {
  const error = t.throws(build, { instanceOf: BootError }) as BootError;
  t.is(error.code, code, error.message);
  for (const mention of mentions) t.regex(error.message, mention);
  return error;
}

const registry = (providers: readonly unknown[], guardrails: readonly unknown[] = []) =>
  new PluginRegistry(providers as ProviderRegistration[], guardrails as GuardrailRegistration[], dependencies);

test('duplicate provider id → DUPLICATE_PLUGIN naming the id', (t) => {
  bootError(t, () => registry([openai(), openai({ organization: 'org-1' })]), 'DUPLICATE_PLUGIN', /provider plugin "openai"/);
});

test('duplicate guardrail id → DUPLICATE_PLUGIN naming the id', (t) => {
  bootError(t, () => registry([openai()], [wordFilter(), wordFilter()]), 'DUPLICATE_PLUGIN', /guardrail plugin "word-filter"/);
});

test('a provider and a guardrail may share an id (unique per kind)', (t) => {
  const shared = registry([openai()], [wordFilter({ id: 'openai' })]);
  t.deepEqual(shared.providerIds(), ['openai']);
  t.is(shared.list().guardrails[0].id, 'openai');
});

test('missing manifest → INVALID_MANIFEST', (t) => {
  bootError(t, () => registry([{ params: {}, create: () => ({}) }]), 'INVALID_MANIFEST', /a provider plugin has no manifest/);
  bootError(t, () => registry([openai], []), 'INVALID_MANIFEST', /provider plugin has no manifest/);
  bootError(t, () => registry([openai()], [null]), 'INVALID_MANIFEST', /guardrail plugin has no manifest/);
});

for (const id of ['Open-AI', 'open ai', '-openai', '', 'a'.repeat(64), 'é', 42]) {
  test(`bad id ${JSON.stringify(id)} → INVALID_MANIFEST`, (t) => {
    bootError(t, () => registry([openaiWith({ id })]), 'INVALID_MANIFEST', /provider plugin/, /id must match/);
  });
}

test('id of 63 characters is accepted as a manifest id', (t) => {
  const id = `a${'b-'.repeat(31)}`;
  t.is(id.length, 63);
  // Validation passes; creation then fails because the OpenAI instance reports its own id.
  bootError(t, () => registry([openaiWith({ id })]), 'INVALID_MANIFEST', new RegExp(`provider plugin "${id}" created an instance with id "openai"`));
});

for (const version of ['1.0', 'v1.0.0', '1.0.0.0', '', 1, undefined]) {
  test(`bad version ${JSON.stringify(version)} → INVALID_MANIFEST naming the plugin`, (t) => {
    bootError(t, () => registry([openaiWith({ version })]), 'INVALID_MANIFEST', /provider plugin "openai"/, /version must be semantic/);
  });
}

test('pre-release versions are accepted', (t) => {
  const created = registry([openaiWith({ version: '2.0.0-beta.1' })], [wordFilter({ version: '0.0.1-rc-2' })]);
  t.is(created.list().providers[0].version, '2.0.0-beta.1');
  t.is(created.list().guardrails[0].version, '0.0.1-rc-2');
});

for (const description of ['', '   ', undefined, 7]) {
  test(`bad description ${JSON.stringify(description)} → INVALID_MANIFEST naming the plugin`, (t) => {
    bootError(t, () => registry([openai()], [wordFilter({ description })]), 'INVALID_MANIFEST', /guardrail plugin "word-filter"/, /description is required/);
  });
}

test('kind mismatch → INVALID_MANIFEST naming the plugin', (t) => {
  bootError(t, () => registry([openai()], [openai()]), 'INVALID_MANIFEST', /guardrail plugin "openai"/, /kind is "provider"/);
  bootError(t, () => registry([wordFilter()]), 'INVALID_MANIFEST', /provider plugin "word-filter"/, /kind is "guardrail"/);
});

test('a provider written against a contract version the registry does not support → INVALID_MANIFEST naming the plugin, nothing created', (t) => {
  let created = 0;
  const counted = (registration: ProviderRegistration): ProviderRegistration => ({ ...registration, create: (deps) => (created++, registration.create(deps)) });
  bootError(t, () => registry([counted(openai()), counted(openaiWith({ id: 'future', specificationVersion: 'v2' }))]), 'INVALID_MANIFEST', /provider plugin "future"/, /specificationVersion "v2" is not supported/, /"v1"/);
  bootError(t, () => registry([openaiWith({ id: 'unversioned', specificationVersion: undefined })]), 'INVALID_MANIFEST', /provider plugin "unversioned"/, /specificationVersion undefined/);
  t.is(created, 0);
});

test('every shipped provider declares the provider contract version the registry implements', async (t) => {
  const { SPECIFICATION_VERSION } = await import('./spec/index.js');
  const { default: shipped } = await import('../gateway.config.js');
  t.true(shipped.providers.length >= 31);
  for (const registration of shipped.providers) t.is(registration.manifest.specificationVersion, SPECIFICATION_VERSION, registration.manifest.id);
  t.notThrows(() => registry(shipped.providers));
});

test('create not a function → INVALID_MANIFEST', (t) => {
  bootError(t, () => registry([{ ...openai(), create: undefined }]), 'INVALID_MANIFEST', /provider plugin "openai"/, /create must be a function/);
});

test('params schema that does not compile → INVALID_MANIFEST', (t) => {
  bootError(t, () => registry([openai()], [wordFilter({ params: { type: 'nonsense' } })]), 'INVALID_MANIFEST', /guardrail plugin "word-filter"/, /params schema/);
});

test('OpenAI params failing its schema → INVALID_PARAMS naming plugin and field', (t) => {
  bootError(t, () => registry([openai({ baseUrl: 'ftp://x' })]), 'INVALID_PARAMS', /provider plugin "openai"/, /\/baseUrl/);
  bootError(t, () => registry([openai({ organization: '' })]), 'INVALID_PARAMS', /provider plugin "openai"/, /\/organization/);
  bootError(t, () => registry([openai({ baseUrl: 'https://x', unknown: true } as never)]), 'INVALID_PARAMS', /provider plugin "openai"/, /additional properties/);
});

test('guardrail params failing its schema → INVALID_PARAMS naming plugin and field', (t) => {
  bootError(t, () => registry([openai()], [wordFilter({}, { words: [] })]), 'INVALID_PARAMS', /guardrail plugin "word-filter"/, /\/words/);
  bootError(t, () => registry([openai()], [wordFilter({}, { words: ['ok', ''] })]), 'INVALID_PARAMS', /guardrail plugin "word-filter"/, /\/words\/1/);
  bootError(t, () => registry([openai()], [{ ...wordFilter(), params: undefined }]), 'INVALID_PARAMS', /guardrail plugin "word-filter"/, /words/);
});

test('nothing is created when any plugin is invalid', (t) => {
  let created = 0;
  const provider: ProviderRegistration = {
    ...openai(),
    create(deps) {
      created++;
      return openai().create(deps);
    },
  };
  bootError(t, () => registry([provider], [wordFilter({}, { words: [] })]), 'INVALID_PARAMS');
  t.is(created, 0);
});

test('valid params pass and plugins are created with their own dependencies', (t) => {
  const seen: PluginManifest[] = [];
  const created = new PluginRegistry([openai({ baseUrl: 'http://127.0.0.1:9/v1/', project: 'p' })], [wordFilter()], (manifest) => {
    seen.push(manifest);
    return pluginDependencies();
  });
  t.deepEqual(
    seen.map((manifest) => manifest.id),
    ['openai', 'word-filter'],
  );
  t.is(created.provider('openai')?.baseUrl({}), 'http://127.0.0.1:9/v1');
  t.is(created.guardrail('word-filter')?.id, 'word-filter');
  t.is(created.provider('missing'), undefined);
  t.deepEqual(created.providerIds(), ['openai']);
});

test('list() shows providers with operations and guardrails with their manifests', (t) => {
  const listing = registry([openai()], [wordFilter()]).list();
  t.is(listing.providers.length, 1);
  const [provider] = listing.providers;
  t.like(provider, { id: 'openai', kind: 'provider', version: '1.0.0', name: 'OpenAI' });
  t.deepEqual(
    [...(provider.operations ?? [])].sort(),
    ['chat', 'completion', 'embed', 'imageEdit', 'imageGenerate', 'imageVariation', 'models', 'realtime', 'responses', 'speech', 'transcription', 'translation'],
  );
  t.is(typeof provider.description, 'string');
  t.true(provider.description.length > 0);
  t.deepEqual(listing.guardrails, [
    {
      id: 'word-filter',
      kind: 'guardrail',
      version: '0.1.0',
      description: 'Denies requests that contain listed words.',
      stages: ['input'],
      incremental: true,
      params: WORD_FILTER_PARAMS,
    },
  ]);
});

test('list() of an empty registry', (t) => {
  t.deepEqual(registry([]).list(), { providers: [], guardrails: [] });
});

const environment = (): NodeJS.ProcessEnv => ({
  GATEWAY_API_KEY: 'gw-registry-test-key-0123456789',
  GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'gateway-registry-test-')),
});
const silentDestination = { write() {} };

test('createGateway: a configured hook with stage "bogus" → BootError UNKNOWN_STAGE', (t) => {
  const bogus = { name: 'my-hook', stage: 'bogus', run: async () => {} } as unknown as Hook;
  bootError(
    t,
    () => createGateway({ providers: [openai()], hooks: [bogus] }, { environment: environment(), logDestination: silentDestination }),
    'UNKNOWN_STAGE',
    /"my-hook"/,
    /"bogus"/,
  );
});

test('createGateway: a configured hook named like a built-in hook → BootError DUPLICATE_HOOK', (t) => {
  const clash: Hook = { name: 'gateway-auth', stage: 'log', run: async (_context, next) => next() };
  bootError(
    t,
    () => createGateway({ providers: [openai()], hooks: [clash] }, { environment: environment(), logDestination: silentDestination }),
    'DUPLICATE_HOOK',
    /"gateway-auth"/,
  );
});

test('createGateway: invalid provider params fail at boot', (t) => {
  bootError(
    t,
    () => createGateway({ providers: [openai({ baseUrl: 'ftp://x' })] }, { environment: environment(), logDestination: silentDestination }),
    'INVALID_PARAMS',
    /"openai"/,
  );
});

test('a provider that does not declare authHeaders (lower-case names) → INVALID_MANIFEST naming the plugin', (t) => {
  for (const authHeaders of [undefined, ['X-Api-Key'], [''], 'authorization']) {
    const registration = openai();
    const broken: ProviderRegistration = { ...registration, create: (deps) => ({ ...registration.create(deps), authHeaders }) as never };
    bootError(t, () => new PluginRegistry([broken], [], dependencies), 'INVALID_MANIFEST', /openai/, /authHeaders/);
  }
});
