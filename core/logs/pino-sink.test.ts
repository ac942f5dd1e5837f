import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { pino } from 'pino';
import type { LogEntry } from './entry.js';
import { loggerWithHeldLines, PinoLogSink } from './pino-sink.js';

const ENTRY: LogEntry = {
  id: '0192f0c4-1a2b-7c3d-8e4f-0123456789ab',
  time: '2026-11-24T01:02:03.456Z',
  traceId: 'trace-"quoted"-\u2028-é',
  method: 'POST',
  path: '/v1/chat/completions',
  operation: 'chat',
  provider: 'openai',
  model: 'gpt-4o-mini',
  status: 429,
  outcome: 'error',
  error: { type: 'rate_limit', code: null, message: 'line one\nline "two"' },
  caller: 'virtual-key:vk_1',
  callerType: 'virtual-key',
  keyId: 'vk_1',
  keyName: 'ünïcode ✓',
  streaming: false,
  durationMs: 1.234,
  gatewayMs: 0.5,
  usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
  metadata: { team: 'a' },
  guardrails: [{ guardrail: 'g', side: 'input', action: 'allow', ms: 0.1 }],
  route: { name: 'r', source: 'config' },
  attempts: [],
};

/** A destination that keeps each write as it came. */
const capture = () => {
  const writes: string[] = [];
  return { writes, write: (text: string) => void writes.push(text) };
};
const withoutTime = (line: string) => line.replace(/"time":\d+/, '"time":0');

test('the hand-built request line is the line pino writes for the same entry', async (t) => {
  const options = { level: 'info', base: undefined };
  const reference = capture();
  new PinoLogSink(pino(options, reference)).write(ENTRY);
  const held = capture();
  const { logger, lines } = loggerWithHeldLines(options, held);
  new PinoLogSink(logger, lines).write(ENTRY);
  await new Promise((resolve) => setImmediate(resolve));
  t.is(reference.writes.length, 1);
  t.is(held.writes.length, 1);
  t.is(withoutTime(held.writes[0]), withoutTime(reference.writes[0]));
  t.regex(held.writes[0], /^\{"level":30,"time":\d{13},"request":\{/);
  t.deepEqual(JSON.parse(held.writes[0]).request, JSON.parse(JSON.stringify(ENTRY)));
});

test('the lines of one turn are written together, after it; a line pino writes keeps its place', async (t) => {
  const destination = capture();
  const { logger, lines } = loggerWithHeldLines({ level: 'info', base: undefined }, destination);
  const sink = new PinoLogSink(logger, lines);
  sink.write(ENTRY);
  sink.write({ ...ENTRY, id: 'second' });
  t.is(destination.writes.length, 0, 'held until the end of the turn');
  logger.warn('after two requests');
  sink.write({ ...ENTRY, id: 'third' });
  t.is(destination.writes.length, 1);
  await new Promise((resolve) => setImmediate(resolve));
  t.is(destination.writes.length, 2);
  const parsed = destination.writes.join('').trimEnd().split('\n').map((line) => JSON.parse(line));
  t.deepEqual(
    parsed.map((line) => line.request?.id ?? line.msg),
    [ENTRY.id, 'second', 'after two requests', 'third'],
  );
});

test('the logger’s flush writes the held lines; below info nothing is written', async (t) => {
  const destination = capture();
  const { logger, lines } = loggerWithHeldLines({ level: 'info', base: undefined }, destination);
  new PinoLogSink(logger, lines).write(ENTRY);
  logger.flush();
  t.is(destination.writes.length, 1);
  const quiet = capture();
  const silent = loggerWithHeldLines({ level: 'warn', base: undefined }, quiet);
  new PinoLogSink(silent.logger, silent.lines).write(ENTRY);
  await new Promise((resolve) => setImmediate(resolve));
  t.is(quiet.writes.length, 0);
});

const run = promisify(execFile);
const module = fileURLToPath(new URL('./pino-sink.js', import.meta.url));

/** A process that logs one request line to pino's asynchronous stdout destination, then ends as `ending` says. */
async function childOutput(ending: string): Promise<string> {
  const script = `
    const { pino } = await import('pino');
    const { loggerWithHeldLines, PinoLogSink } = await import(${JSON.stringify(module)});
    const { logger, lines } = loggerWithHeldLines({ level: 'info', base: undefined }, pino.destination({ dest: 1, sync: false }));
    new PinoLogSink(logger, lines).write({ id: 'last-words', metadata: {}, guardrails: [] });
    ${ending}
  `;
  try {
    return (await run(process.execPath, ['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('.', import.meta.url)) })).stdout;
  } catch (error) {
    return (error as { stdout: string }).stdout;
  }
}

test('a line held for the turn reaches the output when the process exits or crashes right after', async (t) => {
  for (const ending of ['process.exit(0);', 'process.exit(3);', "throw new Error('crash');", "setImmediate(() => { throw new Error('crash'); });", '']) {
    const output = await childOutput(ending);
    t.regex(output, /"request":\{"id":"last-words"/, ending || 'the loop runs out of work');
    t.is(output.trimEnd().split('\n').length, 1, ending);
  }
});
