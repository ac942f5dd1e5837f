import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import type { ChatRequest } from '../../core/spec/index.js';
import { startGateway } from '../../test/harness.js';
import { runConformance } from '../../core/conformance/index.js';
import { DEFAULT_LIMIT, toAcmeRequest } from './acme-chat.js';
import { conformance } from './acme-conformance.js';
import exampleConfig from './gateway.config.js';

const root = process.cwd();

test('the worked example passes the conformance kit', async (t) => {
  const report = await runConformance(conformance);
  t.true(report.passed, JSON.stringify(report.results.filter((result) => result.outcome === 'fail')));
  const skipped = report.results.filter((result) => result.outcome === 'skip').map((result) => result.name);
  t.deepEqual(skipped, ['chat.n', 'embeddings'], 'only what Acme declares it lacks is skipped');
});

test("the guide's conformance command runs the compiled example and prints a passing table", (t) => {
  // `npm run conformance -- --module …` is `npm run build` followed by exactly this.
  const run = spawnSync(process.execPath, ['dist/core/conformance/cli.js', '--module', 'dist/examples/provider/acme-conformance.js'], { cwd: root, encoding: 'utf8', timeout: 30_000 });
  t.is(run.status, 0, run.stderr);
  t.regex(run.stdout, /^conformance: acme \(Acme LLM\)$/m);
  t.regex(run.stdout, /^tools\.stream\s+PASS$/m);
  t.regex(run.stdout, /16 passed, 0 failed, 2 skipped: CONFORMS/);
  const guide = readFileSync(join(root, 'docs/writing-a-provider.md'), 'utf8');
  const printed = /prints \(the build's output first\):\n\n```\n([\s\S]*?)```/.exec(guide)?.[1];
  t.is(printed?.trim(), run.stdout.trim(), 'the table in the guide is what the command prints');
});

test("the example's configuration boots and lists acme with its operations", async (t) => {
  const gateway = await startGateway({ providers: exampleConfig.providers });
  try {
    const listed = gateway.gateway.registry.list().providers.find((provider) => provider.id === 'acme');
    t.like(listed, { id: 'acme', kind: 'provider', version: '0.1.0', operations: ['chat'] });
  } finally {
    await gateway.close();
  }
});

test('the request mapping: system gathered, turns renamed, limit filled, stop and tools carried', (t) => {
  const request: ChatRequest = {
    model: 'acme-small',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', content: 'sunny', tool_call_id: 'c1' },
    ],
    stop: 'END',
    tools: [{ type: 'function', function: { name: 'w', description: 'weather', parameters: { type: 'object' } } }],
  };
  t.deepEqual(toAcmeRequest(request), {
    model: 'acme-small',
    system: 'Be brief.',
    turns: [
      { speaker: 'user', text: 'Weather?' },
      { speaker: 'model', text: '', calls: [{ id: 'c1', name: 'w', input: { city: 'Oslo' } }] },
      { speaker: 'tool', text: 'sunny', call_id: 'c1' },
    ],
    limit: DEFAULT_LIMIT,
    stop_at: ['END'],
    tools: [{ name: 'w', about: 'weather', schema: { type: 'object' } }],
  });
  t.is(toAcmeRequest({ ...request, max_tokens: 50 }).limit, 50);
});

test('the guide shows every file of the example exactly as it is', (t) => {
  const guide = readFileSync(join(root, 'docs/writing-a-provider.md'), 'utf8');
  const shown = [...guide.matchAll(/<!-- file: (\S+) -->\n```ts\n([\s\S]*?)```\n/g)];
  const files = shown.map((match) => match[1]);
  t.deepEqual(files.sort(), ['examples/provider/acme-chat.ts', 'examples/provider/acme-conformance.ts', 'examples/provider/acme-error.ts', 'examples/provider/acme-fake.ts', 'examples/provider/gateway.config.ts', 'examples/provider/index.ts']);
  for (const [, path, code] of shown) t.is(code, readFileSync(join(root, path), 'utf8'), `${path} differs from the guide`);
});
