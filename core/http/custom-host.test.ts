import test, { type ExecutionContext } from 'ava';
import { GatewayError } from '../errors.js';
import { CustomHostGuard } from './custom-host.js';

type Policy = ConstructorParameters<typeof CustomHostGuard>[0];

const guard = (policy: Partial<Policy> = {}) =>
  new CustomHostGuard({ allowLoopback: true, allowPrivate: false, allowCidrs: [], ...policy });

const DEFAULT = guard();
const STRICT = guard({ allowLoopback: false });
const PERMISSIVE = guard({ allowLoopback: true, allowPrivate: true, allowCidrs: ['0.0.0.0/0', '::/0'] });

async function refused(t: ExecutionContext, host: CustomHostGuard, value: string, reason?: RegExp): Promise<void> {
  const error = await t.throwsAsync(host.check(value), { instanceOf: GatewayError }, value);
  if (!error) return;
  const gatewayError = error as GatewayError;
  t.is(gatewayError.status, 400, value);
  t.is(gatewayError.body.type, 'invalid_request_error');
  t.is(gatewayError.body.param, 'x-gateway-custom-host');
  t.is(gatewayError.body.code, 'custom_host_refused');
  if (reason) t.regex(gatewayError.message, reason, value);
}

test('loopback is allowed by default', async (t) => {
  for (const address of ['127.0.0.1', '127.255.0.9', '::1']) t.is(DEFAULT.refusal(address), undefined, address);
  t.is(await DEFAULT.check('http://127.0.0.1:8080/v1'), 'http://127.0.0.1:8080/v1');
  t.is(await DEFAULT.check('http://[::1]:11434/v1'), 'http://[::1]:11434/v1');
  t.is(await DEFAULT.check('http://localhost:1234/v1'), 'http://localhost:1234/v1');
});

test('loopback is refused with allowLoopback false', async (t) => {
  for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) t.regex(STRICT.refusal(address) ?? '', /loopback/, address);
  await refused(t, STRICT, 'http://127.0.0.1:8080/v1', /loopback/);
  await refused(t, STRICT, 'http://[::1]/v1', /loopback/);
  await refused(t, STRICT, 'http://localhost:8080/v1', /loopback/);
  await refused(t, STRICT, 'http://2130706433/v1', /loopback/);
  await refused(t, STRICT, 'http://[::ffff:127.0.0.1]/v1', /loopback/);
});

const ALWAYS = ['169.254.169.254', '169.254.0.1', 'fd00:ec2::254', 'fe80::1', 'febf::1', '0.0.0.0', '0.1.2.3', '::', '::ffff:169.254.169.254'];

for (const [name, host] of [
  ['default', DEFAULT],
  ['no loopback', STRICT],
  ['allowPrivate and every CIDR allowed', PERMISSIVE],
] as const) {
  test(`link-local, metadata and unspecified addresses are always refused (${name})`, async (t) => {
    for (const address of ALWAYS) t.regex(host.refusal(address) ?? '', /always refused/, address);
    await refused(t, host, 'http://169.254.169.254/latest/meta-data', /always refused/);
    await refused(t, host, 'http://[fd00:ec2::254]/', /always refused/);
    await refused(t, host, 'http://[fe80::1]:8080/v1', /always refused/);
    await refused(t, host, 'http://0.0.0.0:8080/v1', /always refused/);
    await refused(t, host, 'http://0/v1', /always refused/);
    await refused(t, host, 'http://[::]/v1', /always refused/);
    await refused(t, host, 'http://[::ffff:169.254.169.254]/', /always refused/);
    await refused(t, host, 'http://[::ffff:a9fe:a9fe]/', /always refused/);
    await refused(t, host, 'https://[FD00:EC2:0:0:0:0:0:254]/', /always refused/);
  });
}

const PRIVATE = ['10.0.0.1', '192.168.1.1', '172.16.0.1', '172.31.255.254', '100.64.0.1', 'fc00::1', 'fdff::1', '::ffff:10.0.0.1'];

test('private addresses are refused by default', async (t) => {
  for (const address of PRIVATE) t.regex(DEFAULT.refusal(address) ?? '', /private network/, address);
  await refused(t, DEFAULT, 'http://10.0.0.1/v1', /private/);
  await refused(t, DEFAULT, 'http://192.168.1.1:8000/v1', /private/);
  await refused(t, DEFAULT, 'http://172.16.0.1/v1', /private/);
  await refused(t, DEFAULT, 'http://[fc00::1]/v1', /private/);
  await refused(t, DEFAULT, 'http://[::ffff:192.168.1.1]/v1', /private/);
});

test('private addresses are allowed with allowPrivate', async (t) => {
  const host = guard({ allowPrivate: true });
  for (const address of PRIVATE) t.is(host.refusal(address), undefined, address);
  t.is(await host.check('http://10.0.0.1/v1'), 'http://10.0.0.1/v1');
  t.is(await host.check('http://[fc00::1]:8000/v1/'), 'http://[fc00::1]:8000/v1');
});

test('private addresses are allowed by a matching allowCidrs entry only', async (t) => {
  const host = guard({ allowCidrs: ['10.1.0.0/16', '192.168.1.1', 'fc00::/64', '172.16.0.0/24'] });
  t.is(host.refusal('10.1.2.3'), undefined);
  t.regex(host.refusal('10.2.0.1') ?? '', /private/);
  t.is(host.refusal('192.168.1.1'), undefined);
  t.regex(host.refusal('192.168.1.2') ?? '', /private/);
  t.is(host.refusal('fc00::1'), undefined);
  t.regex(host.refusal('fc00:0:0:1::1') ?? '', /private/);
  t.is(host.refusal('172.16.0.1'), undefined);
  t.regex(host.refusal('172.16.1.1') ?? '', /private/);
  t.is(await host.check('http://10.1.0.1:8000/v1'), 'http://10.1.0.1:8000/v1');
  await refused(t, host, 'http://10.0.0.1/v1', /private/);
});

test('allowCidrs never opens link-local or metadata addresses', (t) => {
  const host = guard({ allowCidrs: ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::/32'] });
  t.regex(host.refusal('169.254.169.254') ?? '', /always refused/);
  t.regex(host.refusal('fe80::1') ?? '', /always refused/);
  t.regex(host.refusal('fd00:ec2::254') ?? '', /always refused/);
});

test('allowCidrs does not open loopback when allowLoopback is false', (t) => {
  const host = guard({ allowLoopback: false, allowCidrs: ['127.0.0.0/8'] });
  t.regex(host.refusal('127.0.0.1') ?? '', /loopback/);
});

test('public addresses are allowed', async (t) => {
  for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2001:4860:4860::8888']) {
    t.is(DEFAULT.refusal(address), undefined, address);
    t.is(STRICT.refusal(address), undefined, address);
  }
  t.is(await DEFAULT.check('https://8.8.8.8/v1'), 'https://8.8.8.8/v1');
  t.is(await STRICT.check('http://8.8.8.8:8080'), 'http://8.8.8.8:8080');
  t.is(await DEFAULT.check('https://[2001:4860:4860::8888]/openai/v1'), 'https://[2001:4860:4860::8888]/openai/v1');
});

test('check() refuses other schemes', async (t) => {
  for (const value of ['ftp://8.8.8.8/v1', 'file:///etc/passwd', 'ws://8.8.8.8/v1', 'gopher://8.8.8.8/', 'javascript:alert(1)']) {
    await refused(t, DEFAULT, value, /only http and https/);
  }
});

test('check() refuses credentials in the URL', async (t) => {
  await refused(t, DEFAULT, 'http://user:pass@8.8.8.8/v1', /credentials/);
  await refused(t, DEFAULT, 'http://user@8.8.8.8/v1', /credentials/);
  await refused(t, DEFAULT, 'http://:pass@127.0.0.1/v1', /credentials/);
});

test('check() refuses query strings and fragments', async (t) => {
  await refused(t, DEFAULT, 'http://8.8.8.8/v1?api-version=1', /query string/);
  await refused(t, DEFAULT, 'http://127.0.0.1:8080/v1#frag', /query string or fragment/);
});

test('check() refuses values that are not absolute URLs', async (t) => {
  for (const value of ['', 'not a url', '127.0.0.1:8080', '/v1', '//8.8.8.8/v1', 'http://']) {
    await refused(t, DEFAULT, value, /not an absolute URL/);
  }
});

test('check() normalises: trailing slashes are removed, the path kept', async (t) => {
  t.is(await DEFAULT.check('http://127.0.0.1:8080/v1/'), 'http://127.0.0.1:8080/v1');
  t.is(await DEFAULT.check('http://127.0.0.1:8080/v1///'), 'http://127.0.0.1:8080/v1');
  t.is(await DEFAULT.check('http://127.0.0.1:8080/'), 'http://127.0.0.1:8080');
  t.is(await DEFAULT.check('http://127.0.0.1:8080'), 'http://127.0.0.1:8080');
  t.is(await DEFAULT.check('HTTP://127.0.0.1:80/a/b/'), 'http://127.0.0.1/a/b');
  t.is(await DEFAULT.check('https://8.8.8.8:443/x'), 'https://8.8.8.8/x');
});

test('IPv4-mapped IPv6 addresses are judged as the IPv4 address they map', async (t) => {
  t.regex(DEFAULT.refusal('::ffff:169.254.169.254') ?? '', /always refused/);
  t.regex(STRICT.refusal('::ffff:127.0.0.1') ?? '', /loopback/);
  t.regex(DEFAULT.refusal('::ffff:10.0.0.1') ?? '', /private/);
  t.is(DEFAULT.refusal('::ffff:8.8.8.8'), undefined);
  await refused(t, PERMISSIVE, 'http://[::ffff:169.254.169.254]:80/latest', /always refused/);
});

test('the connect-time lookup refuses names that resolve only to refused addresses', async (t) => {
  const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    STRICT.lookup('localhost', { all: false }, (lookupError) => resolve(lookupError));
  });
  t.truthy(error);
  t.is(error?.code, 'EREFUSEDHOST');
});

test('the connect-time lookup passes allowed addresses', async (t) => {
  const address = await new Promise<string>((resolve, reject) => {
    DEFAULT.lookup('localhost', { all: false, family: 4 }, (error, result) => (error ? reject(error) : resolve(String(result))));
  });
  t.is(address, '127.0.0.1');
});

test('IPv4-compatible and NAT64 forms of the metadata address are refused like the address itself', (t) => {
  const guard = new CustomHostGuard({ allowLoopback: true, allowPrivate: true, allowCidrs: [] });
  for (const address of ['::a9fe:a9fe', '64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254']) {
    t.regex(guard.refusal(address) ?? '', /always refused \(169\.254\.169\.254\)/, address);
  }
  t.is(guard.refusal('2001:db8::1'), undefined);
});

test.serial('an allowed IP-literal host is parsed once and remembered; refused values are never remembered', async (t) => {
  const host = guard();
  const parsed: string[] = [];
  const OriginalURL = globalThis.URL;
  globalThis.URL = class extends OriginalURL {
    constructor(value: string | URL, base?: string | URL) {
      super(value, base);
      parsed.push(String(value));
    }
  } as typeof URL;
  try {
    t.is(await host.check('http://127.0.0.1:9000/v1/'), 'http://127.0.0.1:9000/v1');
    t.is(await host.check('http://127.0.0.1:9000/v1/'), 'http://127.0.0.1:9000/v1');
    t.deepEqual(parsed.filter((value) => value.includes(':9000')), ['http://127.0.0.1:9000/v1/'], 'the second check did not parse again');
    await refused(t, host, 'http://169.254.169.254/latest');
    await refused(t, host, 'http://169.254.169.254/latest');
    t.is(parsed.filter((value) => value.includes('169.254')).length, 2, 'a refused value is checked every time');
  } finally {
    globalThis.URL = OriginalURL;
  }
});
