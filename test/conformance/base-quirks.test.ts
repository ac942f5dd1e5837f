import test from 'ava';
import { compatibleFake, compatibleSubject } from '../../plugins/providers/openai-compatible/openai-compatible-fake.js';
import { type CompatibleProviderManifest, defineCompatibleProvider } from '../../plugins/providers/openai-compatible/index.js';
import { runConformance } from '../../core/conformance/index.js';

/**
 * The base's quirks that no shipped compatible provider happens to use, proven end to end through
 * the kit: a key in a header of the provider's own, a required max_tokens, usage under another field.
 * The fake refuses what the manifest says the provider refuses, so a plugin built without a quirk fails.
 */
const strict: CompatibleProviderManifest = {
  id: 'strict-compatible',
  name: 'Strict compatible',
  description: 'A test provider with every quirk.',
  baseUrl: 'http://127.0.0.1:9/v1',
  operations: ['chat'],
  auth: { kind: 'header', header: 'api-key' },
  headers: { 'x-client': 'gateway' },
  chat: { maxTokensDefault: 512, noMessageNames: true, streamUsageField: 'meta.usage', n: false, developerRole: true },
};

test('a plugin with header auth, required max_tokens and usage under another field conforms', async (t) => {
  const report = await runConformance(compatibleSubject(defineCompatibleProvider(strict), strict, { model: 'm' }));
  t.deepEqual(
    report.results.filter((result) => result.outcome === 'fail'),
    [],
  );
  t.is(report.results.find((result) => result.name === 'auth')?.outcome, 'pass');
  t.is(report.results.find((result) => result.name === 'developer-role')?.outcome, 'pass');
});

test('the same provider without its quirks in the plugin fails the checks that catch each', async (t) => {
  const naive: CompatibleProviderManifest = { ...strict, id: 'naive-compatible', auth: { kind: 'bearer' }, headers: {}, chat: { n: false, developerRole: true } };
  const subject = { ...compatibleSubject(defineCompatibleProvider(naive), naive, { model: 'm' }), fake: compatibleFake({ ...strict, id: 'naive-compatible' }) };
  const report = await runConformance(subject);
  const outcome = (name: string) => report.results.find((result) => result.name === name);
  t.false(report.passed);
  t.is(outcome('chat.plain')?.outcome, 'fail', 'max_tokens missing: the provider refuses the request');
  t.is(outcome('auth')?.outcome, 'fail');
  t.regex(outcome('auth')?.detail ?? '', /api-key/);
});
