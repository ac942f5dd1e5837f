/**
 * Reads a main-thread `.cpuprofile` of the gateway (from `bench/pipeline-profile.ts` under
 * `node --cpu-prof`) and prints where the busy time goes, by pipeline stage: each sample is charged
 * to the innermost frame of the gateway's own code on its stack (so library calls count for the
 * stage that made them); samples with no gateway frame are Node's HTTP server and sockets, undici's
 * response parsing, or the engine. With `--per-request <µs> --requests <n>` the shares are also
 * scaled to µs per request (the profile's wall-clock samples are only used as shares).
 *
 *   npx node dist/bench/stage-breakdown.js /tmp/prof/CPU.….cpuprofile [--per-request 330]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Stage of a gateway source file (path under dist/), first match wins. */
const STAGES: ReadonlyArray<[stage: string, pattern: RegExp]> = [
  ['request read + validation', /core\/http\/body|core\/api\/(chat-schema|validate|chat-completions|completions-schema|embeddings-schema)|core\/api\/request-headers/],
  ['auth + virtual key lookup', /core\/hooks\/auth|core\/identity\/|core\/routing\/targets|core\/http\/forwarded-headers|core\/vault\/(resolver|virtual-keys|credentials)|core\/http\/custom-host|core\/registry/],
  ['limits (admission + settlement)', /core\/vault\/(limits|pricing|estimate)|core\/http\/usage-tap|core\/store\//],
  ['guardrails', /core\/hooks\/guardrail|core\/guardrails\/|plugins\/guardrails\//],
  ['transform (provider mapping)', /core\/hooks\/transform|plugins\/providers\/|plugins\/shared\//],
  ['forward (undici request)', /core\/hooks\/forward|core\/http\/upstream\.js/],
  ['answer read + mapping', /core\/api\/(operation|streamed-response|protocol-respond|json-response|chat-strict|strict-fields|stream-relay|answer-text)|core\/http\/(sse|upstream-answer)/],
  ['response write', /core\/api\/handler\.js:send/],
  ['log entry + sinks (pino, metrics, queue)', /core\/hooks\/log|core\/logs\/|core\/metrics\/|core\/telemetry\//],
  ['pipeline + Koa glue', /core\/pipeline\/|core\/api\/handler|core\/app|core\/errors/],
];

function stageOfFrame(frame: ProfileNode['callFrame']): string | undefined {
  const match = /\/dist\/((core|plugins)\/.*)$/.exec(frame.url);
  if (!match) return undefined;
  const where = frame.functionName === 'send' && match[1] === 'core/api/handler.js' ? 'core/api/handler.js:send' : match[1];
  return STAGES.find(([, pattern]) => pattern.test(where))?.[0] ?? `other gateway code (${match[1]})`;
}

function stageOfLeaf(frame: ProfileNode['callFrame']): string {
  if (frame.functionName === '(idle)') return '(idle)';
  if (frame.functionName === '(garbage collector)') return 'engine: garbage collection';
  if (frame.functionName === '(program)' || frame.functionName === 'runMicrotasks') return 'engine: promises, microtasks, other';
  if (frame.url.includes('node_modules/undici/')) return 'undici (answer parsing, sockets)';
  if (frame.url.includes('/dist/bench/') || frame.url.includes('node_modules/autocannon')) return '(bench driver)';
  if (frame.url.includes('node:internal/modules') || frame.url.includes('loader')) return '(start-up: module loading)';
  return 'Node HTTP server, streams, sockets';
}

function main(): void {
  const [file, ...rest] = process.argv.slice(2);
  if (!file) throw new Error('usage: stage-breakdown.js <file.cpuprofile> [--per-request <µs>]');
  const perRequestIndex = rest.indexOf('--per-request');
  const perRequest = perRequestIndex === -1 ? undefined : Number(rest[perRequestIndex + 1]);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const stageOf = new Map<number, string>();
  const resolve = (id: number): string => {
    const known = stageOf.get(id);
    if (known) return known;
    let stage: string | undefined;
    for (let current: number | undefined = id; current !== undefined && stage === undefined; current = parents.get(current)) {
      stage = stageOfFrame(nodes.get(current)!.callFrame);
    }
    stage ??= stageOfLeaf(nodes.get(id)!.callFrame);
    stageOf.set(id, stage);
    return stage;
  };
  const totals = new Map<string, number>();
  for (const [index, id] of profile.samples.entries()) {
    const stage = resolve(id);
    totals.set(stage, (totals.get(stage) ?? 0) + (profile.timeDeltas[index] ?? 0));
  }
  const excluded = ['(idle)', '(start-up: module loading)', '(bench driver)'];
  const busy = [...totals].filter(([stage]) => !excluded.includes(stage)).reduce((sum, [, time]) => sum + time, 0);
  const rows = [...totals].filter(([stage]) => !excluded.includes(stage)).sort((left, right) => right[1] - left[1]);
  const lines = ['| stage | share of busy main thread |' + (perRequest ? ' µs per request |' : ''), '|---|---:|' + (perRequest ? '---:|' : '')];
  for (const [stage, time] of rows) {
    const share = time / busy;
    lines.push(`| ${stage} | ${(100 * share).toFixed(1)} % |` + (perRequest ? ` ${(share * perRequest).toFixed(0)} |` : ''));
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
