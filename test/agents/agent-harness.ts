import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ExecutionContext } from 'ava';
import type { GatewayConfig } from '../../config/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { type AgentFake, type AgentTask, SECRET_LINE, startAgentFake } from './agent-fake.js';

/**
 * What every agent test shares: a gateway on loopback with the OpenAI provider, a virtual key bound
 * to it whose custom host is the agent fake (so the agent holds only a base URL and that key), a
 * workspace holding `notes.txt` (the line the agent's tool must read), a fresh home (HOME and the
 * XDG folders) so no user configuration is read, and a trap: a loopback proxy named in the proxy
 * variables that records any request meant for beyond loopback.
 */

export interface AgentSetup {
  readonly gateway: TestGateway;
  readonly fake: AgentFake;
  /** The virtual key (`vk-…`), bound to OpenAI with the fake as custom host. */
  readonly key: string;
  /** The gateway's origin, `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly home: string;
  /** The agent's working folder, holding `notes.txt`. */
  readonly workspace: string;
  readonly notesPath: string;
  /** Requests (and CONNECT tunnels) that reached the trap: anything meant for beyond loopback. */
  readonly escapes: string[];
  /** PATH, the fresh home and XDG folders, the proxy trap, no colour; add the tool's own settings. */
  readonly environment: NodeJS.ProcessEnv;
  /** `environment` plus the loopback guard preloaded into every Node process (`loopback-preload.ts`), for agents that run on Node. */
  readonly nodeEnvironment: NodeJS.ProcessEnv;
  /** What the preloaded guard refused (`lookup <name>` / `connect <host>`), read from its report file. */
  readonly refused: () => string[];
}

export { FINAL_ANSWER, SECRET_LINE } from './agent-fake.js';

/** The provider the virtual key is bound to (default OpenAI), and the plugins the gateway loads beside OpenAI's. */
export interface AgentUpstream {
  readonly provider?: string;
  readonly registrations?: ReadonlyArray<NonNullable<GatewayConfig['providers']>[number]>;
}

async function startTrap(): Promise<{ origin: string; escapes: string[]; close: () => void }> {
  const escapes: string[] = [];
  const trap = createServer((request, response) => {
    escapes.push(`${request.method} ${request.url}`);
    response.writeHead(502).end();
  });
  trap.on('connect', (request, socket) => {
    escapes.push(`CONNECT ${request.url}`);
    // Refused, not dropped: a dropped tunnel makes some clients retry in a loop.
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  });
  trap.listen(0, '127.0.0.1');
  await once(trap, 'listening');
  return {
    origin: `http://127.0.0.1:${(trap.address() as AddressInfo).port}`,
    escapes,
    close: () => {
      trap.close();
      trap.closeAllConnections();
    },
  };
}

/** Makes the workspace, starts the fake (its task may name the notes' path), the trap and the gateway, creates the virtual key, and tears all down with the test. */
export async function setUpAgent(t: ExecutionContext, label: string, task: (notesPath: string) => AgentTask, upstream: AgentUpstream = {}): Promise<AgentSetup> {
  const home = mkdtempSync(join(tmpdir(), `${label}-home-`));
  const workspace = mkdtempSync(join(tmpdir(), `${label}-work-`));
  const notesPath = join(workspace, 'notes.txt');
  writeFileSync(notesPath, `${SECRET_LINE}\n`);
  const fake = await startAgentFake(task(notesPath));
  const trap = await startTrap();
  const gateway = await startGateway({ providers: [openai(), ...(upstream.registrations ?? [])] });
  t.teardown(async () => {
    await gateway.close();
    await fake.close();
    trap.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  });
  const created = await fetch(`${gateway.url}/admin/virtual-keys`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ name: label, provider: upstream.provider ?? 'openai', provider_key: PROVIDER_KEY, custom_host: fake.baseUrl }),
  });
  if (created.status !== 201) throw new Error(`creating the virtual key answered ${created.status}: ${await created.text()}`);
  const { key } = (await created.json()) as { key: string };
  const xdg = { XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.local/share'), XDG_CACHE_HOME: join(home, '.cache'), XDG_STATE_HOME: join(home, '.local/state') };
  for (const folder of Object.values(xdg)) mkdirSync(folder, { recursive: true });
  const environment: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    USERPROFILE: home,
    ...xdg,
    TMPDIR: tmpdir(),
    NO_COLOR: '1',
    CI: '1',
    TERM: 'dumb',
    HTTPS_PROXY: trap.origin,
    HTTP_PROXY: trap.origin,
    https_proxy: trap.origin,
    http_proxy: trap.origin,
    ALL_PROXY: trap.origin,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    // Node's own fetch follows the proxy variables only when told to (Node 24).
    NODE_USE_ENV_PROXY: '1',
  };
  const report = join(home, 'loopback-report.txt');
  writeFileSync(report, '');
  const preload = pathToFileURL(join(import.meta.dirname, 'loopback-preload.js')).href;
  const nodeEnvironment = { ...environment, NODE_OPTIONS: `--import=${preload}`, AGENT_LOOPBACK_REPORT: report };
  const refused = () => readFileSync(report, 'utf8').split('\n').filter(Boolean);
  return { gateway, fake, key, url: gateway.url, home, workspace, notesPath, escapes: trap.escapes, environment, nodeEnvironment, refused };
}

export interface RunResult {
  readonly failed: boolean;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end (killed after `timeoutMs`), its standard input closed. */
export function run(command: string, args: readonly string[], options: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs?: number }): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { env: options.env, cwd: options.cwd, timeout: options.timeoutMs ?? 100_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ failed: error !== null, code: child.exitCode, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

/** The path of a file inside an installed package. */
export const packagePath = (...parts: string[]): string => join(process.cwd(), 'node_modules', ...parts);

/**
 * The checks every agent test ends with: the tool's result reached the model, every request was
 * logged with the expected operation and answered 200 with no warning logged, the key stayed in
 * the gateway, and nothing
 * was sent beyond loopback (but for `allowedEscapes`: attempts a tool makes whatever its settings,
 * each named and explained by its test; the trap refuses them).
 */
export async function assertAgentRan(t: ExecutionContext, setup: AgentSetup, operations: readonly string[], allowedEscapes: readonly string[] = []): Promise<void> {
  t.true(
    setup.fake.toolResults().some((result) => result.includes(SECRET_LINE)),
    'the tool ran in the agent and its result (the file line) came back to the provider',
  );
  const entries = await setup.gateway.waitForEntries(setup.fake.bodies().length, 10_000);
  t.true(entries.length >= 2);
  t.deepEqual([...new Set(entries.map((entry) => entry.operation))].sort(), [...operations].sort());
  t.deepEqual(entries.filter((entry) => entry.status !== 200).map((entry) => `${entry.operation} ${entry.status}`), []);
  t.deepEqual(setup.gateway.lines.filter((line) => line.level >= 40).map((line) => line.msg), [], 'the gateway logged no warning or error');
  t.false(setup.gateway.rawLog().includes(setup.key), 'the virtual key is never logged');
  t.false(
    setup.fake.requests.some((request) => JSON.stringify(request.headers).includes(setup.key)),
    'the virtual key never reaches the provider',
  );
  t.true(setup.fake.requests.every((request) => request.headers.authorization === `Bearer ${PROVIDER_KEY}`));
  t.deepEqual(setup.escapes.filter((escape) => !allowedEscapes.includes(escape)), [], 'nothing beyond loopback through the proxy variables');
  t.deepEqual(setup.refused(), [], 'no lookup or connection beyond loopback in a Node process');
}

/** Runs `body` with every `fetch` of this process recorded (for agents that run in the test's process); returns the URLs not on loopback. */
export async function recordingFetches(body: () => Promise<void>): Promise<string[]> {
  const original = globalThis.fetch;
  const escapes: string[] = [];
  globalThis.fetch = (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') escapes.push(url.href);
    return original(input, init);
  };
  try {
    await body();
  } finally {
    globalThis.fetch = original;
  }
  return escapes;
}
