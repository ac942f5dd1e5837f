import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, kill, type RedisProcess, startRedis, stopAll, waitFor } from './redis-processes.js';

/** A primary, its replica and three sentinels on loopback, for tests. */
export interface RedisSentinelSet {
  /** `redis+sentinel://[:password@]127.0.0.1:<port>,…/<master name>`: what `REDIS_URL` takes. */
  readonly url: string;
  readonly masterName: string;
  /** The servers (the primary first, as started) and the sentinels. */
  readonly servers: readonly RedisProcess[];
  readonly sentinels: readonly RedisProcess[];
  /** The port the sentinels name as primary now. */
  primaryPort(): Promise<number>;
  /** Kills (SIGKILL) the primary and waits until the sentinels have promoted the replica and it says it is primary. */
  killPrimary(): Promise<{ killed: RedisProcess; promoted: RedisProcess }>;
  stop(): Promise<void>;
}

const MASTER = 'gateway';
/** `down-after-milliseconds`: a primary silent this long is judged down (the failover follows within a second or two). */
export const SENTINEL_DOWN_AFTER_MS = 1000;

/**
 * Starts `redis-server` as primary, a second as its replica, and three `redis-server --sentinel`
 * (quorum 2) watching it, in a temp dir on free loopback ports; waits until every sentinel knows
 * the replica and the other sentinels. `password`: the primary and replica require it (the URL
 * carries it). Call `stop()` after.
 */
export async function startRedisSentinel(options: { password?: string } = {}): Promise<RedisSentinelSet> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-'));
  const started: RedisProcess[] = [];
  const { password } = options;
  const auth = password === undefined ? [] : [`requirepass ${password}`, `masterauth ${password}`];
  try {
    const primary = await startRedis(dir, 'primary', () => auth, { password });
    started.push(primary);
    const replica = await startRedis(dir, 'replica', () => [...auth, `replicaof 127.0.0.1 ${primary.port}`], { password });
    started.push(replica);
    await waitFor(async () => (await cli(replica.port, ['INFO', 'replication'], password)).includes('master_link_status:up'), 'replica in sync');
    const sentinels: RedisProcess[] = [];
    for (let index = 0; index < 3; index++) {
      const sentinel = await startRedis(
        dir,
        `sentinel-${index}`,
        () => [
          `sentinel monitor ${MASTER} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${MASTER} ${SENTINEL_DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${MASTER} 5000`,
          `sentinel parallel-syncs ${MASTER} 1`,
          ...(password === undefined ? [] : [`sentinel auth-pass ${MASTER} ${password}`]),
        ],
        { sentinel: true },
      );
      sentinels.push(sentinel);
      started.push(sentinel);
    }
    await waitFor(async () => {
      for (const sentinel of sentinels) {
        const info = await cli(sentinel.port, ['INFO', 'sentinel']);
        if (!/slaves=1,sentinels=3/.test(info)) return false;
      }
      return true;
    }, 'sentinels know the replica and each other');
    const auth_ = password === undefined ? '' : `:${encodeURIComponent(password)}@`;
    const url = `redis+sentinel://${auth_}${sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(',')}/${MASTER}`;
    const primaryPort = async () => Number((await cli(sentinels[0]!.port, ['SENTINEL', 'get-master-addr-by-name', MASTER])).split('\n')[1]);
    return {
      url,
      masterName: MASTER,
      servers: [primary, replica],
      sentinels,
      primaryPort,
      async killPrimary() {
        const port = await primaryPort();
        const killed = [primary, replica].find((server) => server.port === port)!;
        const promoted = killed === primary ? replica : primary;
        await kill(killed);
        await waitFor(async () => (await primaryPort()) === promoted.port && (await cli(promoted.port, ['ROLE'], password)).startsWith('master'), `sentinels promote ${promoted.port}`);
        return { killed, promoted };
      },
      stop: () => stopAll(started, dir),
    };
  } catch (error) {
    await stopAll(started, dir);
    throw error;
  }
}
