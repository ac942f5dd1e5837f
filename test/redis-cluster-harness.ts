import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, kill, type RedisProcess, restart, startRedis, stopAll, waitFor } from './redis-processes.js';

/** One node of the test cluster. */
export interface RedisClusterNode extends RedisProcess {
  /** The node's cluster id (40 hex digits). */
  readonly id: string;
}

/** A Redis Cluster of three primaries and three replicas on loopback, for tests. */
export interface RedisCluster {
  /** `redis+cluster://127.0.0.1:<port>,…` naming every node: what `REDIS_URL` takes. */
  readonly url: string;
  readonly nodes: readonly RedisClusterNode[];
  /** Kills every node and removes their files. */
  stop(): Promise<void>;
  /** The node that serves `key`'s hash slot now (its primary). */
  primaryOf(key: string): Promise<RedisClusterNode>;
  /**
   * Kills (SIGKILL) the primary of `key`'s slot and waits until its replica has taken over and the
   * cluster is ok again. Returns the killed node and the new primary.
   */
  killPrimaryOf(key: string): Promise<{ killed: RedisClusterNode; promoted: RedisClusterNode }>;
  /** `CLUSTER FAILOVER` on the replica of `key`'s primary (a planned switch, no write lost); waits until it is primary. */
  failoverPrimaryOf(key: string): Promise<{ demoted: RedisClusterNode; promoted: RedisClusterNode }>;
  /** Starts a killed node again (same port, same nodes file): it rejoins as a replica of the primary that replaced it; waits until it is in sync and every node says ok. */
  restart(node: RedisClusterNode): Promise<void>;
}

/** `--cluster-node-timeout`: how long a silent primary takes to be judged failed (the failover takes about twice this). */
export const CLUSTER_NODE_TIMEOUT_MS = 1000;

/**
 * Starts six `redis-server --cluster-enabled yes` on free loopback ports in a temp dir, joins them
 * with `redis-cli --cluster create … --cluster-replicas 1 --cluster-yes`, and waits until every node
 * says `cluster_state:ok`. Call `stop()` after (test.after.always).
 */
export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const started: RedisProcess[] = [];
  try {
    for (let index = 0; index < 6; index++) {
      started.push(
        await startRedis(
          dir,
          `node-${index}`,
          () => ['cluster-enabled yes', `cluster-config-file nodes-${index}.conf`, `cluster-node-timeout ${CLUSTER_NODE_TIMEOUT_MS}`, 'cluster-announce-ip 127.0.0.1', 'cluster-replica-validity-factor 0'],
          { bus: true },
        ),
      );
    }
    const addresses = started.map((node) => `127.0.0.1:${node.port}`);
    await cli(started[0]!.port, ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes']);
    const nodes: RedisClusterNode[] = [];
    for (const node of started) nodes.push(Object.assign(node, { id: await cli(node.port, ['CLUSTER', 'MYID']) }));
    await waitFor(async () => (await Promise.all(nodes.map((node) => clusterOk(node)))).every(Boolean), 'cluster_state:ok on every node');
    return cluster(nodes, dir, `redis+cluster://${addresses.join(',')}`);
  } catch (error) {
    await stopAll(started, dir);
    throw error;
  }
}

async function clusterOk(node: RedisProcess): Promise<boolean> {
  return (await cli(node.port, ['CLUSTER', 'INFO'])).includes('cluster_state:ok');
}

const alive = (node: RedisProcess) => node.child.exitCode === null && node.child.signalCode === null;

function cluster(nodes: RedisClusterNode[], dir: string, url: string): RedisCluster {
  const anyAlive = () => nodes.find(alive)!;
  /** The primary of `slot` as a live node sees it (CLUSTER SHARDS would do; CLUSTER NODES is in every 7.x). */
  const primaryOfSlot = async (slot: number, from = anyAlive()): Promise<RedisClusterNode | undefined> => {
    for (const line of (await cli(from.port, ['CLUSTER', 'NODES'])).split('\n')) {
      const [id, , flags, , , , , state, ...ranges] = line.split(' ');
      if (!flags?.includes('master') || flags.includes('fail') || state !== 'connected') continue;
      for (const range of ranges) {
        const [low, high = low] = range.split('-').map(Number);
        if (slot >= low! && slot <= high!) return nodes.find((node) => node.id === id);
      }
    }
    return undefined;
  };
  const slotOf = async (key: string) => Number(await cli(anyAlive().port, ['CLUSTER', 'KEYSLOT', key]));
  const replicaOf = async (primary: RedisClusterNode) => {
    const replicas = await cli(primary.port, ['CLUSTER', 'REPLICAS', primary.id]);
    const id = replicas.split('\n')[0]?.split(' ')[0];
    const replica = nodes.find((node) => node.id === id);
    if (!replica) throw new Error(`no replica of ${primary.port}: ${replicas}`);
    return replica;
  };
  /** Waits until every live node agrees that `slot` is served by `node`, and says cluster_state:ok. */
  const settled = (slot: number, node: RedisClusterNode) =>
    waitFor(async () => {
      for (const other of nodes.filter(alive)) if (!(await clusterOk(other)) || (await primaryOfSlot(slot, other)) !== node) return false;
      return true;
    }, `slot ${slot} served by ${node.port}`);
  return {
    url,
    nodes,
    stop: () => stopAll(nodes, dir),
    async primaryOf(key) {
      const primary = await primaryOfSlot(await slotOf(key));
      if (!primary) throw new Error(`no primary for ${key}`);
      return primary;
    },
    async killPrimaryOf(key) {
      const slot = await slotOf(key);
      const killed = (await primaryOfSlot(slot))!;
      const replica = await replicaOf(killed);
      await kill(killed);
      await waitFor(async () => (await cli(replica.port, ['ROLE'])).startsWith('master'), `replica ${replica.port} promoted`);
      await settled(slot, replica);
      return { killed, promoted: replica };
    },
    async restart(node) {
      await restart(node);
      await waitFor(async () => (await cli(node.port, ['INFO', 'replication'])).includes('master_link_status:up'), `node ${node.port} in sync as a replica`);
      await waitFor(async () => (await Promise.all(nodes.filter(alive).map((other) => clusterOk(other)))).every(Boolean), 'cluster_state:ok on every node');
    },
    async failoverPrimaryOf(key) {
      const slot = await slotOf(key);
      const demoted = (await primaryOfSlot(slot))!;
      const replica = await replicaOf(demoted);
      await cli(replica.port, ['CLUSTER', 'FAILOVER']);
      await settled(slot, replica);
      return { demoted, promoted: replica };
    },
  };
}
