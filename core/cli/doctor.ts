import { existsSync, readdirSync, statSync } from 'node:fs';
import { connect as connectTcp, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { type GatewayConfig, resolveConfig, type ResolvedConfig } from '../../config/index.js';
import { BootError } from '../errors.js';
import { openSharedState } from '../cluster/shared-state.js';
import { MASTER_KEY_FILE, parseMasterKey } from '../vault/keyring.js';
import { VaultService } from '../vault/service.js';
import { nodeVersionProblem, REQUIRED_NODE_MAJOR } from './node-version.js';
import { loadConfig } from './start.js';
import type { CliIo } from './vault.js';

/** One line of the checklist. `skip`: not applicable here (REDIS_URL unset, no data dir yet). */
export interface DoctorCheck {
  readonly name: string;
  readonly status: 'ok' | 'warn' | 'fail' | 'skip';
  readonly detail: string;
}

/** How long a reachability check waits for Redis or PostgreSQL. */
const REACH_TIMEOUT_MS = 3000;

const mode = (path: string): number => statSync(path).mode & 0o777;
const octal = (value: number): string => `0${value.toString(8)}`;
const problem = (error: unknown): string => (error instanceof BootError ? error.message : (error as Error).message);

function checkNode(): DoctorCheck {
  const tooOld = nodeVersionProblem();
  return tooOld ? { name: 'node', status: 'fail', detail: tooOld.split('\n')[0] } : { name: 'node', status: 'ok', detail: `Node ${process.versions.node} (${REQUIRED_NODE_MAJOR} or later needed)` };
}

async function checkConfig(path: string | undefined, source: string, environment: NodeJS.ProcessEnv): Promise<{ check: DoctorCheck; config?: GatewayConfig; resolved?: ResolvedConfig }> {
  const label = path ?? 'the shipped gateway.config';
  try {
    const config = await loadConfig(path, source);
    const resolved = resolveConfig(config, environment);
    return { check: { name: 'config', status: 'ok', detail: `${label} loads and validates (${resolved.providers.length} providers)` }, config, resolved };
  } catch (error) {
    return { check: { name: 'config', status: 'fail', detail: problem(error) } };
  }
}

/** The data dir is the owner's alone: 0700 for the directory, 0600 for every file in it. */
function checkDataDir(dataDir: string): DoctorCheck {
  if (!existsSync(dataDir)) return { name: 'data dir', status: 'skip', detail: `${dataDir} does not exist yet; the first start creates it (0700)` };
  const wrong: string[] = [];
  if (mode(dataDir) !== 0o700) wrong.push(`${dataDir} is ${octal(mode(dataDir))} (chmod 700 ${dataDir})`);
  for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
    const path = join(dataDir, entry.name);
    if (entry.isFile() && mode(path) !== 0o600) wrong.push(`${path} is ${octal(mode(path))} (chmod 600 ${path})`);
    if (entry.isDirectory() && mode(path) !== 0o700) wrong.push(`${path} is ${octal(mode(path))} (chmod 700 ${path})`);
  }
  return wrong.length > 0 ? { name: 'data dir', status: 'fail', detail: wrong.join('; ') } : { name: 'data dir', status: 'ok', detail: `${dataDir}: 0700, its files 0600` };
}

/** host:port of a URL, never its credentials. */
const where = (url: URL, defaultPort: number): string => `${url.hostname}:${url.port || defaultPort}`;

/** Sends AUTH (when the URL has a password) and PING over a fresh connection; any reply proves Redis answers. */
async function pingRedis(redisUrl: string): Promise<string> {
  const url = new URL(redisUrl);
  const port = Number(url.port || 6379);
  const socket: Socket = url.protocol === 'rediss:' ? connectTls({ host: url.hostname, port, servername: url.hostname }) : connectTcp({ host: url.hostname, port });
  socket.setTimeout(REACH_TIMEOUT_MS);
  try {
    return await new Promise<string>((resolve, reject) => {
      let reply = '';
      const commands = url.password ? [`AUTH ${url.username ? `${decodeURIComponent(url.username)} ` : ''}${decodeURIComponent(url.password)}`, 'PING'] : ['PING'];
      socket.once(url.protocol === 'rediss:' ? 'secureConnect' : 'connect', () => socket.write(`${commands.join('\r\n')}\r\n`));
      socket.on('data', (chunk: Buffer) => {
        reply += chunk.toString('utf8');
        const lines = reply.split('\r\n').filter(Boolean);
        if (lines.length >= commands.length) resolve(lines.at(-1)!);
      });
      socket.once('timeout', () => reject(new Error(`no answer within ${REACH_TIMEOUT_MS} ms`)));
      socket.once('error', reject);
    });
  } finally {
    socket.destroy();
  }
}

/** A cluster or Sentinel set-up answers PING through the gateway's own client (it finds the nodes, or the primary). */
async function checkRedisSet(redisUrl: string, mode: 'cluster' | 'sentinel', where: string): Promise<DoctorCheck> {
  const { connectRedis } = await import('../store/redis-connect.js');
  let timer: NodeJS.Timeout | undefined;
  try {
    const connecting = connectRedis(redisUrl);
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${REACH_TIMEOUT_MS} ms`)), REACH_TIMEOUT_MS)));
    const connection = await Promise.race([connecting, timeout]);
    try {
      const reply = await Promise.race([connection.commands.ping(), timeout]);
      return { name: 'redis', status: reply === 'PONG' ? 'ok' : 'fail', detail: `the Redis ${mode} at ${where} ${reply === 'PONG' ? 'answers PING' : `answered ${String(reply).slice(0, 80)}`}` };
    } finally {
      await connection.close();
    }
  } catch (error) {
    return { name: 'redis', status: 'fail', detail: `the Redis ${mode} at ${where} is not reachable: ${(error as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}

async function checkRedis(redisUrl: string | undefined): Promise<DoctorCheck> {
  if (!redisUrl) return { name: 'redis', status: 'skip', detail: 'REDIS_URL is not set: the embedded SQLite store is used' };
  const { parseRedisUrl } = await import('../store/redis-connect.js');
  let target: ReturnType<typeof parseRedisUrl>;
  try {
    target = parseRedisUrl(redisUrl);
  } catch (error) {
    return { name: 'redis', status: 'fail', detail: (error as Error).message };
  }
  if (target.mode === 'cluster') return checkRedisSet(redisUrl, 'cluster', target.nodes.map((node) => `${node.host}:${node.port}`).join(','));
  if (target.mode === 'sentinel') return checkRedisSet(redisUrl, 'sentinel', `${target.sentinels.map((node) => `${node.host}:${node.port}`).join(',')}/${target.masterName}`);
  let url: URL;
  try {
    url = new URL(redisUrl);
  } catch {
    return { name: 'redis', status: 'fail', detail: 'REDIS_URL is not a URL (redis://host:6379)' };
  }
  try {
    const reply = await pingRedis(redisUrl);
    return reply.startsWith('+PONG') ? { name: 'redis', status: 'ok', detail: `${where(url, 6379)} answers PING` } : { name: 'redis', status: 'fail', detail: `${where(url, 6379)} answered ${reply.slice(0, 80)}` };
  } catch (error) {
    return { name: 'redis', status: 'fail', detail: `${where(url, 6379)} is not reachable: ${(error as Error).message}` };
  }
}

async function checkPostgres(databaseUrl: string | undefined): Promise<DoctorCheck> {
  if (!databaseUrl) return { name: 'postgresql', status: 'skip', detail: 'DATABASE_URL is not set: request logs go to SQLite' };
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return { name: 'postgresql', status: 'fail', detail: 'DATABASE_URL is not a URL (postgres://user@host:5432/db)' };
  }
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: REACH_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return { name: 'postgresql', status: 'ok', detail: `${where(url, 5432)} answers a query` };
  } catch (error) {
    return { name: 'postgresql', status: 'fail', detail: `${where(url, 5432)}: ${(error as Error).message || (error as { code?: string }).code}` };
  } finally {
    await client.end().catch(() => {});
  }
}

/** True when the store (SQLite file or Redis) holds a vault: opening it then creates nothing. */
async function vaultStored(resolved: ResolvedConfig): Promise<boolean> {
  if (resolved.redisUrl === undefined) return existsSync(join(resolved.dataDir, 'gateway.sqlite'));
  const state = await openSharedState({ dataDir: resolved.dataDir, redisUrl: resolved.redisUrl, redisPrefix: resolved.vault.redisPrefix });
  try {
    // The vault's start-up canary (core/vault/service.ts): present once a gateway has started.
    return (await state.records.get('vault:canary')) !== undefined;
  } finally {
    await state.close();
  }
}

/** The master key is well formed and opens the stored vault (its canary), without creating anything. */
async function checkMasterKey(resolved: ResolvedConfig | undefined, environment: NodeJS.ProcessEnv, redisReachable: boolean): Promise<DoctorCheck> {
  const dataDir = resolved?.dataDir ?? environment.GATEWAY_DATA_DIR ?? './data';
  const fromEnvironment = environment.GATEWAY_MASTER_KEY;
  const keyFile = join(dataDir, MASTER_KEY_FILE);
  if (fromEnvironment) {
    try {
      fromEnvironment.split(',').filter((part) => part.trim()).forEach(parseMasterKey);
    } catch (error) {
      return { name: 'master key', status: 'fail', detail: `GATEWAY_MASTER_KEY: ${(error as Error).message}` };
    }
  } else if (!existsSync(keyFile)) {
    return { name: 'master key', status: 'skip', detail: `none yet: the first start generates ${keyFile} (or set GATEWAY_MASTER_KEY)` };
  }
  const source = fromEnvironment ? 'GATEWAY_MASTER_KEY' : keyFile;
  if (!redisReachable) return { name: 'master key', status: 'skip', detail: `${source} is well formed; the vault it must open is in Redis, which is not reachable` };
  const storeExists = resolved !== undefined && (await vaultStored(resolved));
  if (!resolved || !storeExists) return { name: 'master key', status: 'ok', detail: `${source} is well formed (no vault stored yet to open)` };
  const service = new VaultService({
    dataDir,
    redisUrl: resolved.redisUrl,
    redisPrefix: resolved.vault.redisPrefix,
    environment: { ...environment },
    credentialCacheMs: 0,
    outputTokenEstimate: resolved.vault.outputTokenEstimate,
  });
  try {
    await service.start();
    return { name: 'master key', status: 'ok', detail: `${source} opens the stored vault (master key id ${service.parts.vault.activeKeyId})` };
  } catch (error) {
    return { name: 'master key', status: 'fail', detail: problem(error) };
  } finally {
    await service.close();
  }
}

/** The checklist for people: one line per check, then a verdict. */
function formatChecklist(checks: readonly DoctorCheck[]): string {
  const width = Math.max(...checks.map((check) => check.name.length));
  const lines = checks.map((check) => `[${check.status}]`.padEnd(7) + ` ${check.name.padEnd(width)}  ${check.detail}`);
  const failed = checks.filter((check) => check.status === 'fail').length;
  return `${lines.join('\n')}\n\n${failed === 0 ? 'no problem found' : `${failed} check${failed === 1 ? '' : 's'} failed`}\n`;
}

/**
 * `llm-gateway doctor`: checks Node, the config, the data dir's modes, Redis and PostgreSQL when
 * configured, and the master key; prints a checklist (or JSON) and returns 1 when one failed.
 */
export async function runDoctor(options: { configPath: string | undefined; configSource: string; json: boolean; io: CliIo }): Promise<number> {
  const { io } = options;
  const environment = io.environment;
  const { check: configCheck, resolved } = await checkConfig(options.configPath, options.configSource, environment);
  const dataDir = resolved?.dataDir ?? environment.GATEWAY_DATA_DIR ?? './data';
  const checks: DoctorCheck[] = [
    checkNode(),
    configCheck,
    checkDataDir(dataDir),
  ];
  const redis = await checkRedis(resolved?.redisUrl ?? (environment.REDIS_URL || undefined));
  checks.push(redis, await checkPostgres(resolved?.logs.databaseUrl ?? (environment.DATABASE_URL || undefined)));
  checks.push(await checkMasterKey(resolved, environment, redis.status !== 'fail'));
  const failed = checks.some((check) => check.status === 'fail');
  io.stdout.write(options.json ? `${JSON.stringify({ ok: !failed, checks }, null, 2)}\n` : formatChecklist(checks));
  return failed ? 1 : 0;
}
