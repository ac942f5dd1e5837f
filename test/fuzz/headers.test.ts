import test from 'ava';
import fc from 'fast-check';
import { ACCOUNT_KEY, PROVIDER_KEY } from '../harness.js';
import { GOOD_HEADERS, headerText, jsonValue } from './arbitraries.js';
import { type FuzzRequest, type FuzzTarget, fuzzSuite } from './fuzz-setup.js';

/** A virtual key bound to openai (whose base URL is the fake): its requests must not choose another target. */
let virtualKey: string;

const suite = fuzzSuite(test, async (target) => {
  const answer = await target.send({
    method: 'POST',
    path: '/admin/virtual-keys',
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ name: 'fuzz-headers', provider: 'openai', provider_key: 'sk-fuzz' })),
  });
  if (answer.status !== 201) throw new Error(`creating a virtual key: ${answer.status} ${answer.text}`);
  virtualKey = JSON.parse(answer.text).key;
});

/** Requests the gateway accepts as they are (the fake refuses them upstream), one per operation. */
const VALID: ReadonlyArray<{ method: string; path: string; body?: object }> = [
  { method: 'POST', path: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } },
  { method: 'POST', path: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true } },
  { method: 'POST', path: '/v1/completions', body: { model: 'gpt-3.5-turbo-instruct', prompt: 'hi' } },
  { method: 'POST', path: '/v1/embeddings', body: { model: 'text-embedding-3-small', input: 'hi' } },
  { method: 'POST', path: '/v1/images/generations', body: { model: 'dall-e-2', prompt: 'a cat' } },
  { method: 'POST', path: '/v1/audio/speech', body: { model: 'tts-1', input: 'hi', voice: 'alloy' } },
  { method: 'GET', path: '/v1/models' },
  { method: 'GET', path: '/v1/files' },
  { method: 'POST', path: '/v1/batches', body: { input_file_id: 'file-1' } },
];

const octet = fc.integer({ min: 0, max: 255 });
/** IPv4 literals in ranges the custom-host guard refuses: private, shared, link-local, metadata, "this network". */
const refusedIpv4 = fc.oneof(
  fc.tuple(octet, octet, octet).map(([b, c, d]) => `10.${b}.${c}.${d}`),
  fc.tuple(octet, octet).map(([c, d]) => `192.168.${c}.${d}`),
  fc.tuple(fc.integer({ min: 16, max: 31 }), octet, octet).map(([b, c, d]) => `172.${b}.${c}.${d}`),
  fc.tuple(fc.integer({ min: 64, max: 127 }), octet, octet).map(([b, c, d]) => `100.${b}.${c}.${d}`),
  fc.tuple(octet, octet).map(([c, d]) => `169.254.${c}.${d}`),
  fc.tuple(octet, octet, octet).map(([b, c, d]) => `0.${b}.${c}.${d}`),
);
/** The same addresses in the spellings URL parsing also accepts, and refused IPv6 forms. */
const refusedHost = fc.oneof(
  refusedIpv4,
  refusedIpv4.map((address) => String(address.split('.').reduce((sum, part) => sum * 256 + Number(part), 0))),
  refusedIpv4.map((address) => `0x${address.split('.').map((part) => Number(part).toString(16).padStart(2, '0')).join('')}`),
  refusedIpv4.map((address) => address.split('.').map((part) => `0${Number(part).toString(8)}`).join('.')),
  refusedIpv4.map((address) => `[::ffff:${address}]`),
  fc.constantFrom('[fe80::1]', '[fd00:ec2::254]', '[::]', '[fc00::1]', '[fdff:ffff::1]', '[64:ff9b::a9fe:a9fe]', '[::a9fe:a9fe]', '[FE80::abcd%25eth0]'),
);
/** Names under reserved top-level domains: the suite's lookup refuses them, as DNS would. */
const unresolvableName = fc
  .tuple(fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}$/), fc.constantFrom('invalid', 'test', 'INVALID'))
  .map(([label, tld]) => `${label}.${tld}`);
const port = fc.option(fc.integer({ min: 1, max: 65_535 }), { nil: undefined });
const urlPath = fc.constantFrom('', '/', '/v1', '/v1/', '/openai/v1', '/%2e%2e/v1', '/v1/../admin');

/** `x-gateway-custom-host` values: refused addresses and names, malformed URLs, and the fake itself under other spellings. */
const customHost = (target: FuzzTarget) => {
  const fakeOrigin = new URL(target.fakeBaseUrl);
  return fc.oneof(
    fc.tuple(fc.constantFrom('http', 'https', 'HTTP'), fc.oneof(refusedHost, unresolvableName), port, urlPath).map(([scheme, host, number, path]) => `${scheme}://${host}${number === undefined ? '' : `:${number}`}${path}`),
    fc.constantFrom('', ' ', 'not a url', '127.0.0.1:8080', '/v1', '//10.0.0.1/v1', 'http://', 'ftp://10.0.0.1/v1', 'file:///etc/passwd', 'javascript:alert(1)', 'ws://10.0.0.1/', 'data:text/plain,x'),
    fc.tuple(fc.constantFrom('user:pass@', 'user@', ':pass@'), urlPath).map(([credentials, path]) => `http://${credentials}127.0.0.1:${fakeOrigin.port}${path}`),
    fc.tuple(fc.constantFrom('?a=1', '#x', '?', '#'), urlPath).map(([suffix, path]) => `http://127.0.0.1:${fakeOrigin.port}${path || '/v1'}${suffix}`),
    fc.constantFrom(`${fakeOrigin.origin}/v1`, `${fakeOrigin.origin}/v1///`, `http://localhost:${fakeOrigin.port}/v1`, `HTTP://127.0.0.1:${fakeOrigin.port}/other`, `http://127.0.0.1:${fakeOrigin.port}`),
    headerText(80),
  );
};

const tokenName = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/);
const FORBIDDEN_FORWARD = ['host', 'content-length', 'x-gateway-api-key', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'proxy-authenticate', 'x-gateway-provider', 'X-Gateway-Custom-Host'];
const forwardList = fc
  .array(fc.oneof(fc.constantFrom(...FORBIDDEN_FORWARD, 'accept', 'user-agent', 'x-extra', 'cookie', 'expect', 'authorization', 'content-type', ''), tokenName), { maxLength: 5 })
  .chain((names) => fc.tuple(fc.constant(names), fc.constantFrom(',', ', ', ' ,', ',,')).map(([list, separator]) => list.join(separator)));

const timeoutValue = fc.oneof(
  fc.constantFrom('', '0', '-1', '1.5', 'NaN', 'Infinity', '1e309', '3600001', '9007199254740993', 'abc', '0x10', ' ', '1,000', '5000ms'),
  fc.double().map(String),
  fc.integer().map(String),
  headerText(12),
).filter((value) => {
  // A valid time-out is only generated long enough for the fake to answer first.
  const number = Number(value);
  return !(Number.isInteger(number) && number >= 1 && number <= 3_600_000) || number >= 5000;
});

const metadataValue = fc.oneof(
  headerText(40),
  jsonValue.map((value) => JSON.stringify(value) ?? 'null'),
  fc.dictionary(fc.string({ maxLength: 140 }), fc.oneof(jsonValue, fc.string({ maxLength: 600 })), { maxKeys: 70 }).map((value) => JSON.stringify(value)),
  fc.integer({ min: 60, max: 80 }).map((count) => JSON.stringify(Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, 'v'])))),
).map((text) => text.replace(/[^\t\x20-\x7e\x80-\xff]/g, ''));

/** Generated values for every gateway header (and a few others). */
const headerValues = (target: FuzzTarget): Record<string, fc.Arbitrary<string | string[]>> => ({
  'x-gateway-api-key': fc.oneof(fc.constantFrom(virtualKey, `${virtualKey}x`, virtualKey.slice(0, -1), '', ACCOUNT_KEY.toUpperCase(), `${ACCOUNT_KEY}x`, ACCOUNT_KEY.slice(0, -1), 'vk-', `vk-${'0'.repeat(40)}`), fc.string({ maxLength: 60 }).map((text) => `vk-${text.replace(/[^\x21-\x7e]/g, '')}`), headerText(80)),
  'x-gateway-provider': fc.oneof(fc.constantFrom('OpenAI', '', 'open ai', 'openai ', 'anthropic', 'azure-openai', '__proto__', 'constructor', 'toString'), headerText(30), fc.constant(['openai', 'openai']).map((values) => [...values])),
  'x-gateway-custom-host': customHost(target),
  'x-gateway-forward-headers': forwardList,
  'x-gateway-trace-id': fc.oneof(headerText(140), fc.stringMatching(/^[A-Za-z0-9._:-]{120,140}$/)),
  'x-gateway-metadata': metadataValue,
  'x-gateway-request-timeout': timeoutValue,
  'x-gateway-strict-api-compliance': fc.oneof(fc.constantFrom('true', 'false', 'TRUE', 'False', '1', '0', 'yes', ''), headerText(10)),
  authorization: fc.oneof(fc.constantFrom('Bearer', 'Bearer ', 'bearer x', 'Basic dXNlcjpwYXNz', 'Token abc', `Bearer ${PROVIDER_KEY} extra`, ''), headerText(60)),
  'x-extra': headerText(40),
  accept: fc.constantFrom('application/json', 'text/event-stream', '*/*', 'image/png', ''),
  // Never 100-continue: forwarding that one upstream is a known 502 (see docs/testing.md).
  expect: fc.oneof(fc.constantFrom('', 'foo', '200-ok', '100-continued', '100continue'), headerText(20).filter((value) => !/100-continue/i.test(value))),
  'content-encoding': fc.constantFrom('gzip', 'br', 'deflate', 'identity', 'zstd', 'gzip, gzip', ''),
});

/** A valid request of a random operation with one to three headers replaced by generated values, and sometimes a good one dropped. */
const headerRequest = (target: FuzzTarget): fc.Arbitrary<FuzzRequest> => {
  const values = headerValues(target);
  const change = fc.oneof(...Object.entries(values).map(([name, value]) => value.map((generated) => [name, generated] as const)));
  return fc
    .record({ valid: fc.constantFrom(...VALID), changes: fc.array(change, { minLength: 1, maxLength: 3 }), dropped: fc.option(fc.constantFrom(...Object.keys(GOOD_HEADERS)), { nil: undefined, freq: 5 }) })
    .map(({ valid, changes, dropped }) => {
      const headers: Record<string, string | string[]> = { ...GOOD_HEADERS };
      // Without x-gateway-provider, GET /v1/models is the gateway's own catalogue list, answered 200
      // with no provider asked (test/api/model-catalogue.e2e.test.ts): not a refusal to fuzz for.
      if (dropped !== undefined && !(valid.path === '/v1/models' && dropped === 'x-gateway-provider')) delete headers[dropped];
      for (const [name, value] of changes) headers[name] = value;
      const body = valid.body === undefined ? undefined : Buffer.from(JSON.stringify(valid.body));
      if (body) headers['content-type'] = 'application/json';
      return { method: valid.method, path: valid.path, headers, body };
    });
};

suite.property('bad x-gateway-* and Authorization headers are answered with an OpenAI-shaped 4xx', headerRequest, { runs: 1000, batches: 3 });
