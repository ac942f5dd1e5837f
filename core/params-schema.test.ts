import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { Ajv } from 'ajv';
import config from '../gateway.config.js';
import { paramsProblems, satisfies } from './params-schema.js';

const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
const shipped = [...config.providers, ...(config.guardrails ?? [])].map((registration) => registration.manifest);

/** Schemas beyond the shipped ones: every keyword `satisfies` knows, and some it must leave to Ajv. */
const SCHEMAS: object[] = [
  { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 2, maxLength: 3 } }, additionalProperties: false },
  { type: 'object', properties: { url: { type: 'string', pattern: '^https?://' }, n: { type: 'integer', minimum: 1, maximum: 10 } } },
  { type: 'object', properties: { ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 } }, additionalProperties: { type: 'boolean' } },
  { type: 'object', properties: { untyped: { minimum: 1, maximum: 10 }, any: true } },
  { type: 'object', properties: { tags: { type: 'array', items: { enum: ['a', 'b'] }, minItems: 1, maxItems: 2 } } },
  { type: ['object', 'null'], properties: { mode: { const: 'x' } } },
  { type: 'object', properties: { emoji: { type: 'string', maxLength: 1 } } },
  { type: 'object', patternProperties: { '^x': { type: 'string' } }, additionalProperties: false },
  { type: 'object', anyOf: [{ required: ['a'] }, { required: ['b'] }] },
  { type: 'object', properties: { a: { type: 'string', format: 'email' } } },
  { type: 'object', minProperties: 1 },
];

/** Values of every JSON kind, and some an in-code configuration can hold (undefined, Infinity). */
const LEAVES: unknown[] = [undefined, null, true, 0, -1, 1.5, 2, 11, Infinity, Number.NaN, '', 'a', 'ab', 'abcd', '😀', 'http://x', 'ftp://x', 'x', 'redact', 'deny', [], ['a'], ['a', 'b', 'c'], ['z'], {}, { a: 1 }];

/** Objects of zero, one or two members, over the schema's property names and one unknown name. */
function valuesFor(schema: Record<string, unknown>): unknown[] {
  const names = [...Object.keys((schema.properties as object | undefined) ?? {}), 'a', 'b', 'xy', 'unknown'];
  const values: unknown[] = [{}, null, 'text', []];
  for (const [index, name] of names.entries()) {
    for (const leaf of LEAVES) {
      values.push({ [name]: leaf });
      values.push({ [name]: leaf, [names[(index + 1) % names.length]]: LEAVES[(index * 7) % LEAVES.length] });
    }
  }
  return values;
}

/** A value JSON can hold: no undefined member, no infinite number. */
function plainJson(value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(plainJson);
  if (value !== null && typeof value === 'object') return Object.values(value).every(plainJson);
  return true;
}

test('satisfies never accepts what Ajv refuses, and decides every JSON value the shipped schemas accept', (t) => {
  const shippedSchemas: object[] = shipped.flatMap((manifest) => (manifest.params ? [manifest.params as object] : []));
  let accepted = 0;
  let left = 0;
  for (const schema of [...shippedSchemas, ...SCHEMAS]) {
    const validate = ajv.compile(schema);
    for (const value of valuesFor(schema as Record<string, unknown>)) {
      const ajvAccepts = validate(value);
      const fast = satisfies(value, schema);
      if (fast) accepted++;
      if (fast && !ajvAccepts) t.fail(`accepted what Ajv refuses: ${JSON.stringify(value)} against ${JSON.stringify(schema)}`);
      // Only keywords it does not know (the extra schemas) and what JSON cannot hold (undefined
      // members, Infinity) are left to Ajv.
      if (ajvAccepts && !fast && shippedSchemas.includes(schema) && plainJson(value)) left++;
    }
  }
  t.true(accepted > 1000, `${accepted} accepted without Ajv`);
  t.is(left, 0, 'JSON values of the shipped schemas that Ajv accepts and satisfies left to it');
});

test('the shipped configuration\'s params are decided without Ajv: {} for every provider, and the policies\' pii params', (t) => {
  for (const { manifest } of config.providers) if (manifest.params) t.true(satisfies({}, manifest.params), manifest.id);
  const pii = shipped.find((manifest) => manifest.id === 'pii')!;
  t.true(satisfies({ action: 'redact' }, pii.params));
  t.true(satisfies({ action: 'deny', types: { email: 'allow' }, replacement: '[{type}]' }, pii.params));
});

test('every shipped plugin\'s params schema compiles with Ajv (boot no longer compiles one it need not)', (t) => {
  for (const manifest of shipped) if (manifest.params) t.notThrows(() => ajv.compile(manifest.params!), manifest.id);
});

test('paramsProblems: Ajv words what is wrong, and a schema Ajv cannot compile throws once params need it', (t) => {
  const schema = { type: 'object', properties: { max: { type: 'integer', minimum: 1 } }, additionalProperties: false };
  t.deepEqual(paramsProblems(schema, { max: 3 }), []);
  t.deepEqual(
    paramsProblems(schema, { max: 0, other: 1 }).map((problem) => `${problem.instancePath} ${problem.message}`),
    [' must NOT have additional properties', '/max must be >= 1'],
  );
  const broken = { type: 'object', properties: { max: { type: 'integr' } } };
  t.deepEqual(paramsProblems(broken, {}), [], '{} needs no property checked');
  t.throws(() => paramsProblems(broken, { max: 1 }), { message: /schema is invalid/ });
});

test('the shipped configuration boots without loading Ajv', (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'params-schema-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const app = fileURLToPath(new URL('./app.js', import.meta.url));
  const shippedConfig = fileURLToPath(new URL('../gateway.config.js', import.meta.url));
  const script = `
    import { createRequire } from 'node:module';
    const { createGateway } = await import(${JSON.stringify(app)});
    const config = (await import(${JSON.stringify(shippedConfig)})).default;
    const gateway = createGateway(config, { environment: { NODE_ENV: 'production', GATEWAY_API_KEY: 'gw-test-key-0123456789abcdef', GATEWAY_DATA_DIR: ${JSON.stringify(dataDir)}, LOG_LEVEL: 'silent' } });
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => path.includes('/node_modules/ajv/'));
    await gateway.close();
    process.stdout.write(JSON.stringify(loaded.length));
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  t.is(result.status, 0, result.stderr);
  t.is(result.stdout, '0');
});
