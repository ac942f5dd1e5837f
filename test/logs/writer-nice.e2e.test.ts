import { readdirSync, readFileSync } from 'node:fs';
import test from 'ava';
import { resolveConfig } from '../../config/index.js';
import { BootError } from '../../core/errors.js';
import { openAIChatHandler, startFake } from '../fakes/openai-fake.js';
import { sdkClient, startGateway, traceId } from '../harness.js';

/** Nice values of this process's threads named `name` (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNices(name: string): number[] {
  const nices: number[] = [];
  for (const task of readdirSync('/proc/self/task')) {
    try {
      if (readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim() !== name) continue;
      const fields = readFileSync(`/proc/self/task/${task}/stat`, 'utf8').split(') ')[1].split(' ');
      nices.push(Number(fields[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return nices;
}

const linux = process.platform === 'linux' ? test.serial : test.serial.skip;

linux('the SQLite log writer thread runs at GATEWAY_LOG_WRITER_NICE, and the request thread keeps its priority', async (t) => {
  const fake = await startFake(openAIChatHandler);
  const before = threadNices('WorkerThread');
  const gateway = await startGateway({}, { GATEWAY_LOG_WRITER_NICE: '7' });
  try {
    const trace = traceId('nice');
    await sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-trace-id': trace }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    await gateway.gateway.flushLogs();
    const page = await fetch(`${gateway.url}/admin/logs?trace_id=${trace}`, { headers: { 'x-gateway-api-key': 'gw-test-account-key-0123456789' } });
    t.is(((await page.json()) as { data: unknown[] }).data.length, 1, 'the writer stored the request');
    const added = threadNices('WorkerThread').filter((nice) => nice === 7);
    t.is(added.length - before.filter((nice) => nice === 7).length, 1, 'one worker thread (the log writer) at nice 7');
    t.is(Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[16]), 0, 'the process (its main thread) keeps nice 0');
  } finally {
    await gateway.close();
    await fake.close();
  }
});

test('logs.writerNice: 0 by default, 0–19 from the config or GATEWAY_LOG_WRITER_NICE; anything else fails the start naming the setting', (t) => {
  t.is(resolveConfig({ providers: [] }, {}).logs.writerNice, 0);
  t.is(resolveConfig({ providers: [], logs: { writerNice: 10 } }, {}).logs.writerNice, 10);
  t.is(resolveConfig({ providers: [], logs: { writerNice: 3 } }, { GATEWAY_LOG_WRITER_NICE: '19' }).logs.writerNice, 19);
  for (const bad of ['20', '-1', 'low', '2.5', ' ']) {
    const error = t.throws(() => resolveConfig({ providers: [] }, { GATEWAY_LOG_WRITER_NICE: bad }), { instanceOf: BootError });
    t.regex(error!.message, /GATEWAY_LOG_WRITER_NICE/);
  }
  t.throws(() => resolveConfig({ providers: [], logs: { writerNice: 25 } }, {}), { instanceOf: BootError, message: /logs\.writerNice/ });
});
