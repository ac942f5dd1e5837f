import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** One `redis-server` (or sentinel) process on a loopback port, its files in `dir`. */
export interface RedisProcess {
  readonly port: number;
  readonly dir: string;
  /** Its configuration file (a restart reads it again; a cluster node keeps its identity in its nodes file). */
  readonly file: string;
  readonly sentinel: boolean;
  child: ChildProcess;
  /** Everything it printed (its log), for a failing test's message. */
  output(): string;
}

const taken = new Set<number>();

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback port that is free now, and (with `bus`) whose cluster bus port (port + 10000) is free
 * too. Random in 20000-45000, so parallel test files rarely pick the same; a clash shows as a
 * process that exits at once, and {@link startRedis} then tries another port.
 */
export async function freePort(bus = false): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 25_000);
    if (taken.has(port) || (bus && taken.has(port + 10_000))) continue;
    if ((await free(port)) && (!bus || (await free(port + 10_000)))) {
      taken.add(port);
      if (bus) taken.add(port + 10_000);
      return port;
    }
  }
}

/**
 * Starts `redis-server` with `lines` (a configuration file without its port) on a free port, and
 * waits until it answers PING. `sentinel`: started as `redis-server <file> --sentinel`.
 */
export async function startRedis(dir: string, name: string, lines: (port: number) => string[], options: { bus?: boolean; sentinel?: boolean; password?: string } = {}): Promise<RedisProcess> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort(options.bus);
    const file = join(dir, `${name}.conf`);
    writeFileSync(file, [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, 'save ""', 'appendonly no', ...lines(port)].join('\n') + '\n');
    const node = launch({ port, dir, file, sentinel: options.sentinel === true });
    if (await answers(node, options.password)) return node;
    node.child.kill('SIGKILL');
    if (attempt === 4) throw new Error(`redis-server ${name} did not start: ${node.output()}`);
  }
}

function launch(place: Pick<RedisProcess, 'port' | 'dir' | 'file' | 'sentinel'>): RedisProcess {
  const child = spawn('redis-server', place.sentinel ? [place.file, '--sentinel'] : [place.file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { ...place, child, output: () => output };
}

/** Starts a killed process again on its port with its configuration file; waits until it answers PING. */
export async function restart(node: RedisProcess, password?: string): Promise<void> {
  const again = launch(node);
  node.child = again.child;
  if (!(await answers(again, password))) throw new Error(`redis-server on ${node.port} did not start again: ${again.output()}`);
}

async function answers(node: RedisProcess, password?: string): Promise<boolean> {
  for (let index = 0; index < 100; index++) {
    if (node.child.exitCode !== null) return false;
    if ((await cli(node.port, ['PING'], password).catch(() => '')) === 'PONG') return true;
    await sleep(50);
  }
  return false;
}

/** `redis-cli -p <port> <args…>`: its output, trimmed. */
export async function cli(port: number, args: string[], password?: string): Promise<string> {
  const auth = password === undefined ? [] : ['--no-auth-warning', '-a', password];
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...auth, ...args], { timeout: 10_000 });
  return stdout.trim();
}

/** Kills a process (SIGKILL) and waits for it to be gone. */
export async function kill(node: RedisProcess): Promise<void> {
  if (node.child.exitCode !== null || node.child.signalCode !== null) return;
  const exited = once(node.child, 'exit');
  node.child.kill('SIGKILL');
  await exited;
}

/** Kills every process and removes the directory. */
export async function stopAll(nodes: readonly RedisProcess[], dir: string): Promise<void> {
  await Promise.all(nodes.map(kill));
  for (const node of nodes) {
    taken.delete(node.port);
    taken.delete(node.port + 10_000);
  }
  rmSync(dir, { recursive: true, force: true });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 100 ms until it is true; throws `message` after `ms`. */
export async function waitFor(check: () => Promise<boolean>, message: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out: ${message}`);
}
