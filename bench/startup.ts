import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent } from 'node:http';
import { createServer } from 'node:net';
import { spawnServer } from './children.js';
import { postOnce } from './client.js';
import { CHILD_ENVIRONMENT } from './protocol.js';

/** One start-up of a fresh gateway child (ms from just before the spawn). */
export interface StartupRun {
  /** Until the child's `ready` message (it listens; the IPC message takes a moment more). */
  readyMs: number;
  /** Until the first 200 answer to a chat request, polling from the spawn on. */
  firstAnswerMs: number;
  /** Chat requests sent until that one (refused connections included). */
  attempts: number;
  /** For reference: a bare `node -e ''` from spawn to exit, just before. */
  bareNodeMs: number;
}

/** How long this Node binary takes to start and exit doing nothing (the floor under any start-up). */
async function bareNodeMs(): Promise<number> {
  const startedAt = performance.now();
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return performance.now() - startedAt;
}

/** A loopback port free right now (the child is told to listen on it, so it can be polled before it reports). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Spawns a fresh gateway child (fresh data directory, embedded stores, generated master key) and
 * sends the chat request every `pollMs` from the spawn on, one at a time, until one is answered
 * 200; then stops the child. Throws when none is within `limitMs`.
 */
export async function measureStartup(options: {
  path: string;
  headers: Record<string, string>;
  body: string;
  accountKey: string;
  pollMs: number;
  limitMs: number;
}): Promise<StartupRun> {
  const bareNode = await bareNodeMs();
  const port = await freePort();
  const spawned = spawnServer('gateway', { [CHILD_ENVIRONMENT.gatewayApiKey]: options.accountKey, [CHILD_ENVIRONMENT.port]: String(port) });
  const { ready } = spawned;
  let failure: unknown;
  ready.catch((error: unknown) => (failure = error));
  const target = { url: `http://127.0.0.1:${port}${options.path}`, headers: options.headers, body: options.body, agent: new Agent({ keepAlive: false }) };
  let attempts = 0;
  let firstAnswerAt: number | undefined;
  let lastAnswer = 'no answer';
  while (firstAnswerAt === undefined) {
    if (failure !== undefined) throw failure;
    if (performance.now() - spawned.spawnedAt > options.limitMs) {
      await ready.then((child) => child.stop()).catch(() => {});
      throw new Error(`start-up: no 200 chat answer within ${options.limitMs} ms of the spawn (last: ${lastAnswer})`);
    }
    const attemptAt = performance.now();
    attempts++;
    try {
      const answer = await postOnce(target, 2_000);
      if (answer.status === 200) firstAnswerAt = performance.now();
      else lastAnswer = `${answer.status} ${answer.body.slice(0, 200)}`;
    } catch (error) {
      lastAnswer = (error as { code?: string })?.code ?? String(error);
    }
    if (firstAnswerAt === undefined) await sleep(Math.max(0, options.pollMs - (performance.now() - attemptAt)));
  }
  const child = await ready;
  await child.stop();
  return { readyMs: child.readyAt - spawned.spawnedAt, firstAnswerMs: firstAnswerAt - spawned.spawnedAt, attempts, bareNodeMs: bareNode };
}
