import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Gateway instances as separate processes (`node dist/core/main.js start`), Debian's nginx in
 * front of them, and a TCP relay that can cut one instance's link to PostgreSQL: the pieces of
 * test/scale/three-instances.e2e.test.ts. Every process started here is tracked; `stopAll` (and,
 * as a last resort, the exit of the test process) ends it, whatever the test did.
 */

export const NGINX = '/usr/sbin/nginx';
const MAIN = fileURLToPath(new URL('../../core/main.js', import.meta.url));
const CONFIG = fileURLToPath(new URL('./gateway.config.js', import.meta.url));

/** Each running child and the signal that ends it when the test process exits first. */
const children = new Map<ChildProcess, NodeJS.Signals>();
const cleanups: Array<() => void> = [];
process.once('exit', () => {
  for (const [child, signal] of children) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  for (const cleanup of cleanups) cleanup();
});

/** `lastResort`: SIGKILL for a gateway; SIGTERM for nginx, whose master then stops its worker (killed, it would leave it behind). */
function track(child: ChildProcess, lastResort: NodeJS.Signals = 'SIGKILL'): ChildProcess {
  children.set(child, lastResort);
  child.once('exit', () => children.delete(child));
  return child;
}

/** The pids of a process's children (nginx's workers), from /proc. */
function childPids(pid: number | undefined): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Resolves once the child has exited (at once when it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return once(child, 'exit').then(() => undefined);
}

/** Signals the child, then SIGKILL if it is still there after `graceMs`. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = exited(child);
  child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([done, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
  clearTimeout(timer);
  if (child.exitCode === null && child.signalCode === null) {
    for (const pid of childPids(child.pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    child.kill('SIGKILL');
    await done;
  }
}

/** Every process this module started and still running: SIGTERM, then SIGKILL. */
export async function stopAll(): Promise<void> {
  await Promise.all([...children.keys()].map((child) => stopChild(child)));
}

/** A temporary directory removed by `removeTemporaryDirectories` or at the test process's exit. */
export function temporaryDirectory(label: string): string {
  const path = mkdtempSync(join(tmpdir(), `${label}-`));
  cleanups.push(() => rmSync(path, { recursive: true, force: true }));
  return path;
}

export function removeTemporaryDirectories(): void {
  for (const cleanup of cleanups.splice(0)) cleanup();
}

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free port below the kernel's ephemeral range, for an instance that must come back on the same
 * port after a SIGKILL: while it is dead, no outgoing connection (nginx opens one per request) and
 * no `listen(0)` of another test can be handed that port.
 */
export async function stablePort(): Promise<number> {
  let low = 32_768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // not Linux: the default range's start
  }
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * Math.max(1, low - 10_000));
    if (await listenable(port)) return port;
  }
}

async function waitUntil(what: string, check: () => Promise<boolean>, child: ChildProcess, output: () => string, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited (${child.signalCode ?? child.exitCode}):\n${output()}`);
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what} was not ready within ${limitMs} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface Instance {
  readonly name: string;
  readonly port: number;
  /** `http://127.0.0.1:<port>`, the instance itself (nginx is in front of it). */
  readonly url: string;
  readonly dataDir: string;
  readonly child: ChildProcess;
  output(): string;
}

/**
 * `node dist/core/main.js start --config test/scale/gateway.config.js` on a fixed loopback port
 * (nginx's upstream names it, so a restart must take the same one) and its own data dir; ready once
 * `/health` answers.
 */
export async function startInstance(name: string, port: number, dataDir: string, environment: Record<string, string>): Promise<Instance> {
  const child = track(
    spawn(process.execPath, ['--max-semi-space-size=16', '--no-parallel-scavenge', MAIN, 'start', '--config', CONFIG], {
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', NODE_ENV: 'production', GATEWAY_DATA_DIR: dataDir, ...environment },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const health = () =>
    fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) }).then(
      (answer) => answer.ok,
      () => false,
    );
  await waitUntil(`gateway ${name}`, health, child, () => output, 60_000);
  return { name, port, url, dataDir, child, output: () => output };
}

/** SIGKILL: no drain, no spill of what is in memory. Resolves once the process is gone. */
export async function killInstance(instance: Instance): Promise<void> {
  const done = exited(instance.child);
  instance.child.kill('SIGKILL');
  await done;
}

/** The instance's `/metrics`, read directly (not through nginx). */
export async function metricsOf(instance: Instance, accountKey: string): Promise<string> {
  const answer = await fetch(`${instance.url}/metrics`, { headers: { 'x-gateway-api-key': accountKey }, signal: AbortSignal.timeout(10_000) });
  if (!answer.ok) throw new Error(`/metrics of ${instance.name}: ${answer.status}`);
  return answer.text();
}

/** A metric's value (the first sample matching `name` with `labels`), NaN when absent. */
export function metricValue(text: string, name: string, labels = ''): number {
  const escaped = `${name}${labels}`.replace(/[{}"=]/g, (character) => `\\${character}`);
  const match = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

/** What the log spill of a data dir holds: the trace id of each readable record, and lines that are not. */
export function readSpill(dataDir: string): { segments: number; traces: string[]; unreadable: number } {
  const directory = join(dataDir, 'log-spill');
  if (!existsSync(directory)) return { segments: 0, traces: [], unreadable: 0 };
  const names = readdirSync(directory).filter((name) => /^segment-\d+\.ndjson$/.test(name));
  const traces: string[] = [];
  let unreadable = 0;
  for (const name of names) {
    for (const line of readFileSync(join(directory, name), 'utf8').split('\n')) {
      if (!line) continue;
      try {
        traces.push((JSON.parse(line) as { trace_id: string }).trace_id);
      } catch {
        unreadable++;
      }
    }
  }
  return { segments: names.length, traces, unreadable };
}

/** The header nginx adds to every answer: the upstream addresses it tried, in order. */
export const UPSTREAM_HEADER = 'x-upstream';
/** The header nginx adds to the error it answers itself (no instance could answer). */
export const PROXY_ERROR_HEADER = 'x-proxy-error';
/** nginx's own error body: the OpenAI error shape, so that clients parse it as they parse the gateway's. */
export const PROXY_ERROR_BODY = { error: { message: 'No gateway instance could answer this request.', type: 'server_error', param: null, code: 'upstream_unavailable' } };

export interface Nginx {
  readonly url: string;
  readonly child: ChildProcess;
  /** nginx's error log so far (for failure messages). */
  errorLog(): string;
}

/**
 * The nginx configuration of the test, as docs/deployment.md ("Several instances") recommends it:
 * round robin over the instances; a request goes to the next instance only when connecting failed
 * (`proxy_next_upstream error timeout` without `non_idempotent`: a POST already sent is never sent
 * twice); answers pass through unbuffered (streams); nginx's own errors in the OpenAI error shape.
 */
export function nginxConfig(prefix: string, port: number, upstreams: readonly number[]): string {
  const lines = [
    ...(process.getuid?.() === 0 ? ['user root;'] : []),
    'worker_processes 1;',
    `pid ${prefix}/nginx.pid;`,
    `error_log ${prefix}/error.log warn;`,
    'events { worker_connections 1024; }',
    'http {',
    `  access_log ${prefix}/access.log;`,
    `  client_body_temp_path ${prefix}/client_body;`,
    `  proxy_temp_path ${prefix}/proxy;`,
    `  fastcgi_temp_path ${prefix}/fastcgi;`,
    `  uwsgi_temp_path ${prefix}/uwsgi;`,
    `  scgi_temp_path ${prefix}/scgi;`,
    '  upstream gateways {',
    ...upstreams.map((upstream) => `    server 127.0.0.1:${upstream} max_fails=1 fail_timeout=2s;`),
    '  }',
    '  server {',
    `    listen 127.0.0.1:${port};`,
    '    client_max_body_size 16m;',
    '    location / {',
    '      proxy_pass http://gateways;',
    '      proxy_http_version 1.1;',
    '      proxy_set_header Connection "";',
    '      proxy_set_header Host $host;',
    '      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '      proxy_buffering off;',
    '      proxy_next_upstream error timeout;',
    '      proxy_next_upstream_tries 3;',
    '      proxy_connect_timeout 5s;',
    '      proxy_read_timeout 300s;',
    '      proxy_send_timeout 300s;',
    `      add_header ${UPSTREAM_HEADER} $upstream_addr always;`,
    '      error_page 502 504 = @unavailable;',
    '    }',
    '    location @unavailable {',
    '      default_type application/json;',
    `      add_header ${UPSTREAM_HEADER} $upstream_addr always;`,
    `      add_header ${PROXY_ERROR_HEADER} 1 always;`,
    `      return 502 '${JSON.stringify(PROXY_ERROR_BODY)}';`,
    '    }',
    '  }',
    '}',
  ];
  return `${lines.join('\n')}\n`;
}

/** Debian's nginx as a child process (`-g 'daemon off;'`) with its own prefix and configuration. */
export async function startNginx(upstreams: readonly number[]): Promise<Nginx> {
  const prefix = temporaryDirectory('scale-nginx');
  for (const folder of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(prefix, folder));
  const port = await freePort();
  const conf = join(prefix, 'nginx.conf');
  writeFileSync(conf, nginxConfig(prefix, port, upstreams));
  const checked = spawnSync(NGINX, ['-t', '-q', '-c', conf, '-p', prefix, '-g', 'daemon off;'], { encoding: 'utf8' });
  if (checked.status !== 0) throw new Error(`nginx -t refused the configuration:\n${checked.stderr}`);
  const child = track(spawn(NGINX, ['-c', conf, '-p', prefix, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] }), 'SIGTERM');
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const errorLog = () => {
    try {
      return `${stderr}${readFileSync(join(prefix, 'error.log'), 'utf8')}`;
    } catch {
      return stderr;
    }
  };
  const url = `http://127.0.0.1:${port}`;
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  await waitUntil('nginx', listening, child, errorLog, 20_000);
  return { url, child, errorLog };
}

/** A loopback TCP relay to PostgreSQL: `cut` drops every connection and refuses new ones until `restore`. */
export interface Relay {
  readonly port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startRelay(targetHost: string, targetPort: number): Promise<Relay> {
  let down = false;
  const sockets = new Set<Socket>();
  const keep = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    keep(client);
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: targetHost, port: targetPort });
    keep(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An admin API call to `base` (an instance or nginx) with the account key; its JSON answer, or an error naming the status. */
export async function adminCall(base: { readonly url: string }, accountKey: string, method: string, path: string, body?: unknown): Promise<any> {
  const answer = await fetch(`${base.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': accountKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await answer.text();
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Waits until `check` holds, looking every `stepMs`; fails naming `what` after `limitMs`. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, limitMs: number, stepMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}
