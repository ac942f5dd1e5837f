import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `GATEWAY_WORKERS=2 node dist/core/main.js start` on the embedded store: two processes share the
 * port and, through the primary, the state that must be counted once.
 */
export interface Cluster {
  readonly url: string;
  readonly key: string;
  readonly child: ChildProcess;
  output(): string;
}

export async function startCluster(environment: Record<string, string> = {}): Promise<Cluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-cluster-'));
  const child = spawn(process.execPath, ['dist/core/main.js', 'start'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', GATEWAY_DATA_DIR: dataDir, GATEWAY_WORKERS: '2', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (/2 workers listening/.test(output)) {
        clearInterval(poll);
        resolve();
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`exited with ${code}: ${output}`));
    });
  });
  const url = /gateway listening on (http:\/\/\S+)/.exec(output)![1];
  const key = environment.GATEWAY_API_KEY ?? /\n {2}(gw-\S+)\n/.exec(output)![1]!;
  return { url, key, child, output: () => output };
}

export async function stop(child: ChildProcess): Promise<number | null> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  return ((await exited) as [number | null])[0];
}

