// `npm run build && npx node dist/bench/guardrails-hostile.js`: the time each text guardrail takes
// on hostile inputs (long runs built to make a backtracking pattern or a rescanning loop go
// quadratic), in ms per input. Prints figures only; never fails on a slow result.
// BENCH_HOSTILE_KB sets the input size (default 100 KB); BENCH_HOSTILE_ONLY filters cases by name.
import { cpus, loadavg } from 'node:os';
import type { GuardrailRegistration } from '../core/spec/guardrail.js';
import { codeDetection, pii, promptInjection, urlAllowlist } from '../plugins/guardrails/index.js';
import { pluginDependencies } from '../test/plugin-dependencies.js';

const SIZE = Number(process.env.BENCH_HOSTILE_KB ?? 100) * 1024;
const ONLY = process.env.BENCH_HOSTILE_ONLY;

/** `unit` repeated to about SIZE characters (with `head` in front). */
const fill = (unit: string, head = ''): string => head + unit.repeat(Math.max(1, Math.floor((SIZE - head.length) / unit.length)));

interface Case {
  readonly name: string;
  readonly guardrail: GuardrailRegistration;
  readonly text: string;
}

const url = urlAllowlist({ hosts: ['example.com'] });
const code = codeDetection({});
const injection = promptInjection({});
const piiAll = pii({});

const CASES: Case[] = [
  { name: 'url-allowlist  ab://ab://…', guardrail: url, text: fill('ab://') },
  { name: 'url-allowlist  www.www.…', guardrail: url, text: fill('www.') },
  { name: 'url-allowlist  https://example.com/ + dots', guardrail: url, text: fill('.', 'https://example.com/') },
  { name: 'code-detection one line of spaces', guardrail: code, text: fill(' ') },
  { name: 'code-detection def + letters', guardrail: code, text: fill('a', 'def ') },
  { name: "code-detection ' \\n' lines", guardrail: code, text: fill(' \n') },
  { name: 'code-detection 1.9 KB lines if (x) + spaces', guardrail: code, text: fill(`if (x) ${' '.repeat(1900)}y\n`) },
  { name: 'code-detection 1.9 KB lines def + letters', guardrail: code, text: fill(`def ${'a'.repeat(1900)}\n`) },
  { name: 'prompt-injection system + newlines', guardrail: injection, text: fill('\n', 'system ') },
  { name: 'prompt-injection system + spaces', guardrail: injection, text: fill(' ', 'system ') },
  { name: 'pii  + and 30 digits runs', guardrail: piiAll, text: fill(`+${'1'.repeat(30)} `) },
  { name: 'pii  digit groups 1 1 1 …', guardrail: piiAll, text: fill('1 ') },
  { name: 'pii  card-like groups 4111-', guardrail: piiAll, text: fill('4111-') },
];

/** ms per check of `text`: one run, then repeats up to ~300 ms in all when it is fast (median). */
async function measure(guardrail: GuardrailRegistration, text: string): Promise<number> {
  const plugin = guardrail.create(pluginDependencies());
  const once = async () => {
    const started = performance.now();
    await plugin.check({ side: 'input', operation: 'chat', model: 'gpt-4o', texts: [text], metadata: {}, parameters: {}, partial: false });
    return performance.now() - started;
  };
  const first = await once();
  if (first > 300) return first;
  const runs: number[] = [];
  for (let spent = 0; spent < 300 && runs.length < 200; ) {
    const took = await once();
    runs.push(took);
    spent += took;
  }
  return runs.sort((left, right) => left - right)[Math.floor(runs.length / 2)];
}

async function main(): Promise<void> {
  process.stdout.write(`Hostile guardrail inputs of ~${Math.round(SIZE / 1024)} KB (machine: ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}):\n`);
  for (const entry of CASES) {
    if (ONLY && !entry.name.includes(ONLY)) continue;
    const ms = await measure(entry.guardrail, entry.text);
    process.stdout.write(`  ${entry.name.padEnd(44)} ${ms.toFixed(2).padStart(10)} ms/input\n`);
  }
}

await main();
