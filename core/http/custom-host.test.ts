import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { GatewayError } from '../errors.js';
import { type AddressLookup, CustomHostGuard } from './custom-host.js';

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
  // 2001:db8::/32 is documentation (RFC 3849), now refused; a public address stands in for it.
  t.is(guard.refusal('2606:4700:4700::1111'), undefined);
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

/** One sample per special-purpose range of the IANA registries: refused whatever the policy allows. */
const SPECIAL_PURPOSE: ReadonlyArray<[string, readonly string[]]> = [
  ['0.0.0.0/8 this network (RFC 791)', ['0.0.0.1', '0.255.255.255']],
  ['192.0.0.0/24 IETF protocol assignments (RFC 6890)', ['192.0.0.1', '192.0.0.8', '192.0.0.170', '192.0.0.255']],
  ['192.0.2.0/24 TEST-NET-1 (RFC 5737)', ['192.0.2.1']],
  ['192.88.99.0/24 6to4 relay anycast (RFC 7526)', ['192.88.99.1']],
  ['198.18.0.0/15 benchmarking (RFC 2544)', ['198.18.0.1', '198.19.255.254']],
  ['198.51.100.0/24 TEST-NET-2 (RFC 5737)', ['198.51.100.7']],
  ['203.0.113.0/24 TEST-NET-3 (RFC 5737)', ['203.0.113.7']],
  ['224.0.0.0/4 multicast (RFC 5771)', ['224.0.0.1', '239.255.255.250']],
  ['240.0.0.0/4 reserved (RFC 1112)', ['240.0.0.1', '250.1.2.3', '255.255.255.254']],
  ['255.255.255.255 limited broadcast (RFC 8190)', ['255.255.255.255']],
  ['100::/64 discard-only (RFC 6666)', ['100::1']],
  ['2001::/23 IETF protocol assignments, Teredo (RFC 2928, RFC 4380)', ['2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:2::1']],
  ['2001:db8::/32 documentation (RFC 3849)', ['2001:db8::1']],
  ['3fff::/20 documentation (RFC 9637)', ['3fff::1']],
  ['5f00::/16 SRv6 SIDs (RFC 9602)', ['5f00::1']],
  ['fec0::/10 site-local (RFC 3879)', ['fec0::1', 'feff::1']],
  ['ff00::/8 multicast (RFC 4291)', ['ff02::1', 'ff05::2']],
];

for (const [range, addresses] of SPECIAL_PURPOSE) {
  test(`special-purpose range ${range} is always refused`, async (t) => {
    for (const host of [DEFAULT, STRICT, PERMISSIVE]) {
      for (const address of addresses) t.regex(host.refusal(address) ?? '', /always refused/, address);
    }
    const literal = addresses[0].includes(':') ? `[${addresses[0]}]` : addresses[0];
    await refused(t, PERMISSIVE, `http://${literal}:8080/v1`, /always refused/);
  });
}

test('the ranges beside the special-purpose ones stay allowed', (t) => {
  for (const address of ['192.0.3.1', '198.17.255.255', '198.20.0.1', '223.255.255.255', '2001:200::1', '2001:4860:4860::8888', '2002:808:808::1', '::ffff:0:808:808']) {
    t.is(DEFAULT.refusal(address), undefined, address);
  }
});

test('6to4 (2002::/16) is judged by the IPv4 address in bits 16-47', async (t) => {
  for (const address of ['2002:a9fe:a9fe::', '2002:a9fe:a9fe::1', '2002:a9fe::1', '2002:a9fe:a9fe:1:2:3:4:5']) {
    t.regex(PERMISSIVE.refusal(address) ?? '', /always refused \(169\.254\./, address);
  }
  t.regex(STRICT.refusal('2002:7f00:1::') ?? '', /loopback.*\(127\.0\.0\.1\)/);
  t.regex(DEFAULT.refusal('2002:a00:1::') ?? '', /private network addresses are refused unless gateway.config.ts allows them with customHosts.allowPrivate or customHosts.allowCidrs \(10\.0\.0\.1\)/);
  t.is(DEFAULT.refusal('2002:808:808::'), undefined, '6to4 of 8.8.8.8');
  await refused(t, PERMISSIVE, 'http://[2002:a9fe:a9fe::]/latest/meta-data', /always refused/);
});

test('IPv4-translated (SIIT, ::ffff:0:0:0/96) is judged by the IPv4 address in its last 32 bits', async (t) => {
  t.regex(PERMISSIVE.refusal('::ffff:0:a9fe:a9fe') ?? '', /always refused \(169\.254\.169\.254\)/);
  t.regex(PERMISSIVE.refusal('::ffff:0:169.254.169.254') ?? '', /always refused \(169\.254\.169\.254\)/);
  t.regex(DEFAULT.refusal('::ffff:0:c0a8:101') ?? '', /private.*192\.168\.1\.1/);
  await refused(t, PERMISSIVE, 'http://[::ffff:0:a9fe:a9fe]/', /always refused/);
});

test('mapped forms of the new IPv4 ranges are refused too', (t) => {
  for (const address of ['::ffff:198.18.0.1', '::ffff:240.0.0.1', '::ffff:255.255.255.255', '::ffff:224.0.0.1', '64:ff9b::c000:1']) {
    t.regex(PERMISSIVE.refusal(address) ?? '', /always refused/, address);
  }
});

/** A lookup that answers every name with `addresses` and records the names it was asked. */
function fixedLookup(addresses: string[], asked: string[] = []): AddressLookup {
  return (hostname, _options, callback) => {
    asked.push(hostname);
    callback(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
}

test('a name resolving to a refused address is refused by check() (resolver injected, nothing resolved for real)', async (t) => {
  const asked: string[] = [];
  const host = new CustomHostGuard({ allowLoopback: true, allowPrivate: true, allowCidrs: [] }, fixedLookup(['8.8.8.8', '2002:a9fe:a9fe::'], asked));
  await refused(t, host, 'https://models.example.test/v1', /always refused \(169\.254\.169\.254\)/);
  t.deepEqual(asked, ['models.example.test']);
});

test.serial('a refused address is refused at connect time before any connection is opened', async (t) => {
  // A loopback server counts connections; the injected resolver points the name at it, and the
  // guard's policy refuses loopback, so the request must fail in the lookup and the count stay 0.
  let connections = 0;
  const server = createServer((_request, response) => response.end('reached'));
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const asked: string[] = [];
  const guarded = new CustomHostGuard({ allowLoopback: false, allowPrivate: false, allowCidrs: [] }, fixedLookup(['127.0.0.1'], asked));
  const open = new CustomHostGuard({ allowLoopback: true, allowPrivate: false, allowCidrs: [] }, fixedLookup(['127.0.0.1']));
  const get = (lookup: CustomHostGuard['lookup']) =>
    new Promise<string>((resolve) => {
      const outgoing = request({ host: 'rebound.example.test', port, path: '/', lookup, agent: false }, (response) => {
        response.resume();
        response.on('end', () => resolve(`status ${response.statusCode}`));
      });
      outgoing.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code}`));
      outgoing.end();
    });
  try {
    t.is(await get(guarded.lookup), 'error EREFUSEDHOST');
    t.deepEqual(asked, ['rebound.example.test']);
    t.is(connections, 0, 'no connection was opened to the refused address');
    t.is(await get(open.lookup), 'status 200', 'the same name and server are reached when the policy allows them');
    t.is(connections, 1);
  } finally {
    server.close();
  }
});

