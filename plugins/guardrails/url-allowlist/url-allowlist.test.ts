import test from 'ava';
import { answering, ask, askStream, assertRefused, bootError, judge, longText, policyGateway, streaming } from '../../../test/guardrails/helpers.js';
import { urlAllowlist } from './index.js';

test('params: hosts are host names or *.suffixes; schemes and action are checked', (t) => {
  assertRefused(t, urlAllowlist({ hosts: ['https://example.com'] }), '/hosts/0');
  assertRefused(t, urlAllowlist({ hosts: ['example.com'], action: 'warn' as never }), '/action');
  assertRefused(t, urlAllowlist({ hosts: ['example.com'], schemes: [] }), '/schemes');
  t.is(bootError(urlAllowlist({ hosts: ['*.example.com', 'docs.python.org'], schemes: ['https', 'http'] })), undefined);
});

test('allowed hosts pass; other hosts, schemes and malformed URLs are denied (no network)', async (t) => {
  const guardrail = urlAllowlist({ hosts: ['*.example.com', 'docs.python.org'] });
  t.like(await judge(guardrail, ['See https://docs.python.org/3/ and https://api.example.com/v1?q=1.'], { side: 'output' }), { action: 'allow' });
  t.like(await judge(guardrail, ['See https://example.com.'], { side: 'output' }), { action: 'allow' });
  t.like(await judge(guardrail, ['Go to https://evil.test/login'], { side: 'output' }), { action: 'deny', reason: 'text links to a host that is not allowed', flagged: ['https://evil.test/login'] });
  t.like(await judge(guardrail, ['Go to https://example.com.evil.test/'], { side: 'output' }), { action: 'deny' });
  t.like(await judge(guardrail, ['Go to http://api.example.com/'], { side: 'output' }), { action: 'deny' });
  t.like(await judge(guardrail, ['Go to https://exa mple'], { side: 'output' }), { action: 'deny' });
  t.like(await judge(guardrail, ['Visit www.evil.test today'], { side: 'output' }), { action: 'deny' });
  t.like(await judge(guardrail, ['javascript://x%0Aalert(1)'], { side: 'output' }), { action: 'deny' });
});

test('Unicode (IDN hosts), empty and very long text', async (t) => {
  const guardrail = urlAllowlist({ hosts: ['xn--bcher-kva.example'] });
  t.like(await judge(guardrail, ['Les livres: https://bücher.example/katalog 📚'], { side: 'output' }), { action: 'allow' });
  t.like(await judge(guardrail, ['https://bucher.example/'], { side: 'output' }), { action: 'deny' });
  t.like(await judge(guardrail, [''], { side: 'output' }), { action: 'allow' });
  t.like(await judge(guardrail, [longText(200_000)], { side: 'output' }), { action: 'allow' });
});

test('redact replaces only the disallowed URLs', async (t) => {
  const verdict = await judge(urlAllowlist({ hosts: ['example.com'], action: 'redact' }), ['a https://example.com/x b https://evil.test/y.'], { side: 'output' });
  t.deepEqual(verdict, { action: 'transform', texts: ['a https://example.com/x b [URL REMOVED].'], changes: { url: 1 }, flagged: ['https://evil.test/y'] });
});

test('through the gateway: plain answers are filtered; streamed URLs split across chunks are redacted', async (t) => {
  const setup = await policyGateway({ output: [urlAllowlist({ hosts: ['example.com'], action: 'redact' })] }, answering('Read https://evil.test/a now.'));
  t.teardown(() => setup.close());
  t.like(await ask(setup.client, 'hi'), { content: 'Read [URL REMOVED] now.' });
  setup.fake.handle(streaming(['Read htt', 'ps://ev', 'il.test/a', ' and https://exam', 'ple.com/b now.']));
  t.like(await askStream(setup.client, 'hi'), { content: 'Read [URL REMOVED] and https://example.com/b now.', finishReason: 'stop' });
});

test('hostile runs (~100 KB) give one URL per run: ab://ab://…, www.www.…, a URL followed by 100k dots', async (t) => {
  const redact = urlAllowlist({ hosts: ['example.com'], action: 'redact' });
  t.deepEqual(await judge(redact, [`x ${'ab://'.repeat(20_000)} y`], { side: 'output' }), { action: 'transform', texts: ['x [URL REMOVED] y'], changes: { url: 1 }, flagged: ['ab://'.repeat(20_000)] });
  t.deepEqual(await judge(redact, [`x ${'www.'.repeat(25_000)} y`], { side: 'output' }), { action: 'transform', texts: ['x [URL REMOVED]. y'], changes: { url: 1 }, flagged: ['www.'.repeat(24_999).concat('www')] });
  const dots = '.'.repeat(100_000);
  t.like(await judge(redact, [`https://example.com/${dots}`], { side: 'output' }), { action: 'allow' });
  t.deepEqual(await judge(redact, [`https://evil.test/${dots}`], { side: 'output' }), { action: 'transform', texts: [`[URL REMOVED]${dots}`], changes: { url: 1 }, flagged: ['https://evil.test/'] });
});

test('several URLs in one text: each found once, www inside a scheme URL is not counted twice, trailing punctuation stays', async (t) => {
  const redact = urlAllowlist({ hosts: ['example.com'], action: 'redact' });
  const verdict = await judge(redact, ['(see https://www.evil.test/a), www.bad.test; https://example.com/ok!? and ftp://x.example.com/f.'], { side: 'output' });
  t.deepEqual(verdict, {
    action: 'transform',
    texts: ['(see [URL REMOVED]), [URL REMOVED]; https://example.com/ok!? and [URL REMOVED].'],
    changes: { url: 3 },
    flagged: ['https://www.evil.test/a', 'www.bad.test', 'ftp://x.example.com/f'],
  });
  t.like(await judge(redact, ['1://x and a://y stay: not schemes'], { side: 'output' }), { action: 'allow' });
  // A stream window still holding an unfinished URL leaves it for later.
  t.like(await judge(redact, ['go to www.evil.te'], { side: 'output', partial: true }), { action: 'allow' });
  t.like(await judge(redact, ['go to https://evil.test/a b'], { side: 'output', partial: true }), { action: 'transform' });
});
