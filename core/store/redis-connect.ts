import { createClient, createCluster, createSentinel, type RedisClientType } from '@keyv/redis';
import { errors } from '../errors.js';

/** A host and port of a node or sentinel. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/** What `REDIS_URL` names: one server, a Redis Cluster, or a primary found through Sentinel. */
export type RedisTarget =
  | { readonly mode: 'server'; readonly url: string }
  | { readonly mode: 'cluster'; readonly nodes: readonly RedisNode[]; readonly tls: boolean; readonly username?: string; readonly password?: string }
  | {
      readonly mode: 'sentinel';
      readonly sentinels: readonly RedisNode[];
      readonly masterName: string;
      readonly tls: boolean;
      readonly username?: string;
      readonly password?: string;
      readonly sentinelPassword?: string;
    };

const SCHEMED = /^(?<scheme>rediss?)\+(?<mode>cluster|sentinel):\/\/(?:(?<auth>[^@/]*)@)?(?<hosts>[^/?#]+)(?<path>\/[^?#]*)?(?:\?(?<query>[^#]*))?$/;

function node(text: string, defaultPort: number): RedisNode {
  const match = /^(?:\[(?<v6>[^\]]+)\]|(?<host>[^:]+))(?::(?<port>\d+))?$/.exec(text.trim());
  if (!match) throw new Error(`REDIS_URL: "${text}" is not host:port`);
  return { host: match.groups!.v6 ?? match.groups!.host!, port: Number(match.groups!.port ?? defaultPort) };
}

function credentials(auth: string | undefined): { username?: string; password?: string } {
  if (auth === undefined || auth === '') return {};
  const colon = auth.indexOf(':');
  const username = decodeURIComponent(colon < 0 ? auth : auth.slice(0, colon));
  const password = colon < 0 ? undefined : decodeURIComponent(auth.slice(colon + 1));
  // `redis://:secret@host` (no user) is the default user's password, as in a one-server URL.
  return { ...(username ? { username } : {}), ...(password !== undefined ? { password } : {}) };
}

/**
 * Reads `REDIS_URL`: `redis://` or `rediss://` (one server, as before);
 * `redis+cluster://[user:password@]host:port[,host:port…]` or a plain comma-separated list of nodes
 * (`host:port,host:port` or `redis://host:port,redis://host:port`): a cluster, found from any one;
 * `redis+sentinel://[user:password@]host:port[,host:port…]/<master name>[?sentinel_password=…]`:
 * the primary the sentinels name (the credentials are the primary's; sentinels with a password of
 * their own take `sentinel_password`). `rediss+…` connects with TLS. Throws on anything else.
 */
export function parseRedisUrl(text: string): RedisTarget {
  const url = text.trim();
  const schemed = SCHEMED.exec(url);
  if (schemed) {
    const { scheme, mode, auth, hosts, path, query } = schemed.groups!;
    const tls = scheme === 'rediss';
    const nodes = hosts!.split(',').filter((part) => part.trim() !== '').map((part) => node(part, mode === 'sentinel' ? 26379 : 6379));
    if (nodes.length === 0) throw new Error('REDIS_URL names no node');
    if (mode === 'cluster') return { mode: 'cluster', nodes, tls, ...credentials(auth) };
    const masterName = decodeURIComponent((path ?? '').replace(/^\/+|\/+$/g, ''));
    if (!masterName) throw new Error('REDIS_URL: a redis+sentinel:// URL ends with the master name (redis+sentinel://host:26379/mymaster)');
    const sentinelPassword = new URLSearchParams(query ?? '').get('sentinel_password') ?? undefined;
    return { mode: 'sentinel', sentinels: nodes, masterName, tls, ...credentials(auth), ...(sentinelPassword ? { sentinelPassword } : {}) };
  }
  if (url.includes(',')) {
    const parts = url.split(',').map((part) => part.trim()).filter(Boolean);
    const first = /^(?<scheme>rediss?):\/\/(?:(?<auth>[^@/]*)@)?/.exec(parts[0]!);
    const nodes = parts.map((part) => node(part.replace(/^rediss?:\/\/(?:[^@/]*@)?/, '').replace(/\/.*$/, ''), 6379));
    return { mode: 'cluster', nodes, tls: first?.groups!.scheme === 'rediss', ...credentials(first?.groups!.auth) };
  }
  if (!/^rediss?:\/\//.test(url)) throw new Error('REDIS_URL is not a Redis URL (redis://host:6379, redis+cluster://…, redis+sentinel://…/<master>)');
  return { mode: 'server', url };
}

/**
 * A connection to whatever `REDIS_URL` names, with what every Redis user of the gateway needs:
 * `commands` routed to the right node (by key on a cluster, to the current primary behind
 * Sentinel), pub/sub on a connection of its own that follows failovers, and SCAN over every primary.
 */
export interface RedisConnection {
  readonly mode: RedisTarget['mode'];
  /** Every command of one server; on a cluster each is sent to the primary of its (first) key's slot. */
  readonly commands: RedisClientType;
  /** The client itself, as @keyv/redis takes it (it groups multi-key calls by slot on a cluster). */
  readonly keyvClient: unknown;
  /** Subscribes `listener` to `channel` (classic pub/sub: a PUBLISH on any node of a cluster reaches it). */
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  /** The keys matching `pattern`, a batch at a time, from every primary. */
  scan(pattern: string): AsyncGenerator<string[]>;
  /** Unlinks keys (on a cluster, one call per node: keys of several slots in one UNLINK are refused). */
  unlink(keys: readonly string[]): Promise<number>;
  close(): Promise<void>;
}

/** Options: `offlineQueue: false` fails commands at once while the server is unreachable (the cache's choice: skip rather than wait); a cluster's commands always do. */
export interface RedisConnectOptions {
  readonly offlineQueue?: boolean;
}

/** How often, at most, a cluster re-reads its topology while a node fails (until the failover is over). */
const REDISCOVER_MS = 250;

/** Connects to `url` (see {@link parseRedisUrl}). */
export async function connectRedis(url: string, options: RedisConnectOptions = {}): Promise<RedisConnection> {
  const target = parseRedisUrl(url);
  if (target.mode === 'cluster') return connectCluster(target);
  if (target.mode === 'sentinel') return connectSentinel(target, options);
  return connectServer(target.url, options);
}

async function connectServer(url: string, options: RedisConnectOptions): Promise<RedisConnection> {
  const client = createClient({ url, ...(options.offlineQueue === false ? { disableOfflineQueue: true } : {}) }) as RedisClientType;
  client.on('error', () => {}); // reconnects by itself; failed commands surface to their caller
  await client.connect();
  let subscriber: Promise<RedisClientType> | undefined;
  return {
    mode: 'server',
    commands: client,
    keyvClient: client,
    async subscribe(channel, listener) {
      subscriber ??= (async () => {
        const duplicate = client.duplicate() as RedisClientType;
        duplicate.on('error', () => {});
        await duplicate.connect();
        return duplicate;
      })();
      await (await subscriber).subscribe(channel, listener);
    },
    scan: (pattern) => scanNode(client, pattern),
    unlink: async (keys) => (keys.length === 0 ? 0 : client.unlink([...keys])),
    async close() {
      await Promise.allSettled([subscriber?.then((connection) => connection.close()), client.close()]);
    },
  };
}

async function* scanNode(client: RedisClientType, pattern: string): AsyncGenerator<string[]> {
  let cursor = '0';
  do {
    const reply = await client.scan(cursor, { MATCH: pattern, COUNT: 1000 });
    cursor = String(reply.cursor);
    if (reply.keys.length > 0) yield reply.keys;
  } while (cursor !== '0');
}

function clusterClient(target: Extract<RedisTarget, { mode: 'cluster' }>) {
  const scheme = target.tls ? 'rediss' : 'redis';
  return createCluster({
    rootNodes: target.nodes.map((root) => ({ url: `${scheme}://${root.host.includes(':') ? `[${root.host}]` : root.host}:${root.port}` })),
    defaults: {
      ...(target.username ? { username: target.username } : {}),
      ...(target.password !== undefined ? { password: target.password } : {}),
      // A command for a node that is down fails at once (it was not sent, so nothing is counted),
      // rather than waiting for a node that a failover is replacing.
      disableOfflineQueue: true,
      socket: { ...(target.tls ? { tls: true } : {}), connectTimeout: 2000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 500) },
    },
    // Failover is the cluster's work; replicas are not read (counters must be read where written).
    useReplicas: false,
  });
}

async function connectCluster(target: Extract<RedisTarget, { mode: 'cluster' }>): Promise<RedisConnection> {
  const cluster = clusterClient(target);
  cluster.on('error', () => {});
  // node-redis reads the cluster's topology again only when a node answers MOVED; a primary that
  // died answers nothing, so its slots would stay pointed at it. Every error or reconnection of a
  // node re-reads the topology (at most every REDISCOVER_MS), which finds the promoted replica as
  // soon as the cluster has elected it.
  let last = 0;
  let pending: NodeJS.Timeout | undefined;
  let closed = false;
  const rediscover = () => {
    if (closed || pending) return;
    const wait = Math.max(0, last + REDISCOVER_MS - Date.now());
    pending = setTimeout(() => {
      pending = undefined;
      last = Date.now();
      const healthy = cluster.masters.find((master) => master.client?.isReady);
      const from = (healthy?.client ?? { options: cluster._options.rootNodes[0] }) as RedisClientType;
      cluster._slots.rediscover(from).catch(() => {});
    }, wait);
    pending.unref();
  };
  cluster.on('node-error', rediscover);
  cluster.on('node-reconnecting', rediscover);
  await cluster.connect();
  const masters = () => Promise.all(cluster.masters.map((master) => cluster.nodeClient(master) as Promise<RedisClientType>));
  return {
    mode: 'cluster',
    commands: cluster as unknown as RedisClientType,
    keyvClient: cluster,
    subscribe: (channel, listener) => cluster.subscribe(channel, listener),
    async *scan(pattern) {
      for (const client of await masters()) yield* scanNode(client, pattern);
    },
    async unlink(keys) {
      const counts = await Promise.all(keys.map((key) => cluster.unlink(key)));
      return counts.reduce((sum, count) => sum + Number(count), 0);
    },
    async close() {
      closed = true;
      clearTimeout(pending);
      await cluster.close().catch(() => cluster.destroy());
    },
  };
}

async function connectSentinel(target: Extract<RedisTarget, { mode: 'sentinel' }>, options: RedisConnectOptions): Promise<RedisConnection> {
  const socket = { ...(target.tls ? { tls: true as const } : {}), connectTimeout: 2000 };
  const sentinel = createSentinel({
    name: target.masterName,
    sentinelRootNodes: target.sentinels.map(({ host, port }) => ({ host, port })),
    nodeClientOptions: {
      ...(target.username ? { username: target.username } : {}),
      ...(target.password !== undefined ? { password: target.password } : {}),
      ...(options.offlineQueue === false ? { disableOfflineQueue: true } : {}),
      socket,
    },
    sentinelClientOptions: { ...(target.sentinelPassword !== undefined ? { password: target.sentinelPassword } : {}), socket },
    // Several connections to the primary, so that one slow script does not queue every request behind it.
    masterPoolSize: 4,
    // node-redis sends a command again on the new primary when the connection it was written to
    // dropped; an admission or a charge the old primary had run (and replicated) would then count
    // twice. None is retried: it fails (503 state_unavailable). Commands not yet sent still wait
    // for the new primary.
    maxCommandRediscovers: 0,
  });
  sentinel.on('error', () => {});
  await sentinel.connect();
  const commands = sentinel as unknown as RedisClientType;
  return {
    mode: 'sentinel',
    commands,
    keyvClient: sentinel,
    subscribe: async (channel, listener) => {
      await sentinel.subscribe(channel, listener);
    },
    scan: (pattern) => scanNode(commands, pattern),
    unlink: async (keys) => (keys.length === 0 ? 0 : commands.unlink([...keys])),
    async close() {
      await sentinel.close().catch(() => sentinel.destroy());
    },
  };
}

/** node-redis's errors for a command that could not reach its node (or lost it before the reply). */
const CONNECTION_ERRORS = new Set(['ClientOfflineError', 'ClientClosedError', 'SocketClosedUnexpectedlyError', 'ConnectionTimeoutError', 'SocketTimeoutError', 'ReconnectStrategyError', 'RootNodesUnavailableError', 'DisconnectsClientError', 'TimeoutError']);
/** Replies of a node that cannot serve the key now: a cluster without a primary for a slot, a replica not yet promoted, a primary still loading. */
const UNAVAILABLE_REPLY = /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING|READONLY|NOREPLICAS)\b/;

/** True for an error that says Redis (or the node of a key) cannot answer now, rather than that the command is wrong. */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (UNAVAILABLE_REPLY.test(error.message)) return true;
  const code = (error as { code?: unknown }).code;
  return CONNECTION_ERRORS.has(error.constructor.name) || (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH)$/.test(code));
}

/**
 * `commands` whose failures for want of a node (see {@link isUnavailable}) become the gateway's 503
 * `state_unavailable` with `Retry-After: 1`, so that a request during a failover fails cleanly;
 * any other failure is passed on as it is.
 */
export function failingCleanly(commands: RedisClientType): RedisClientType {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(commands, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      let wrapper = wrapped.get(property);
      if (wrapper === undefined) {
        wrapper = (...args: unknown[]) => {
          const result = (value as (...args: unknown[]) => unknown).apply(target, args);
          return result instanceof Promise ? result.catch(unavailable) : result;
        };
        wrapped.set(property, wrapper);
      }
      return wrapper;
    },
  });
}

function unavailable(error: unknown): never {
  if (!isUnavailable(error)) throw error;
  throw errors.unavailable('The gateway\'s shared state is failing over or unreachable; the request was not served. Retry shortly.', { code: 'state_unavailable', headers: { 'retry-after': '1' } });
}
