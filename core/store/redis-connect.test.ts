import test from 'ava';
import { isUnavailable, parseRedisUrl } from './redis-connect.js';

test('one server: redis:// and rediss:// as before', (t) => {
  t.deepEqual(parseRedisUrl('redis://127.0.0.1:6379'), { mode: 'server', url: 'redis://127.0.0.1:6379' });
  t.deepEqual(parseRedisUrl(' rediss://:secret@cache.internal:6380/2 '), { mode: 'server', url: 'rediss://:secret@cache.internal:6380/2' });
});

test('a cluster: redis+cluster:// with its nodes and credentials; rediss+cluster:// is TLS', (t) => {
  t.deepEqual(parseRedisUrl('redis+cluster://gateway:p%40ss@10.0.0.1:7000,10.0.0.2:7001,10.0.0.3'), {
    mode: 'cluster',
    nodes: [
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '10.0.0.3', port: 6379 },
    ],
    tls: false,
    username: 'gateway',
    password: 'p@ss',
  });
  t.like(parseRedisUrl('rediss+cluster://:secret@[::1]:7000'), { mode: 'cluster', nodes: [{ host: '::1', port: 7000 }], tls: true, password: 'secret' });
});

test('a cluster: a plain comma-separated list of nodes, bare or as redis:// URLs', (t) => {
  t.deepEqual(parseRedisUrl('127.0.0.1:7000,127.0.0.1:7001'), {
    mode: 'cluster',
    nodes: [
      { host: '127.0.0.1', port: 7000 },
      { host: '127.0.0.1', port: 7001 },
    ],
    tls: false,
  });
  t.like(parseRedisUrl('redis://:secret@a:7000,redis://:secret@b:7001'), { mode: 'cluster', nodes: [{ host: 'a', port: 7000 }, { host: 'b', port: 7001 }], password: 'secret' });
});

test('Sentinel: the sentinels, the master name, the primary\'s password and the sentinels\' own', (t) => {
  t.deepEqual(parseRedisUrl('redis+sentinel://:secret@s1:26379,s2,s3:26380/mymaster?sentinel_password=other'), {
    mode: 'sentinel',
    sentinels: [
      { host: 's1', port: 26379 },
      { host: 's2', port: 26379 },
      { host: 's3', port: 26380 },
    ],
    masterName: 'mymaster',
    tls: false,
    password: 'secret',
    sentinelPassword: 'other',
  });
  t.throws(() => parseRedisUrl('redis+sentinel://s1:26379'), { message: /master name/ });
});

test('anything else is refused with what REDIS_URL takes', (t) => {
  t.throws(() => parseRedisUrl('http://127.0.0.1:6379'), { message: /redis\+cluster/ });
  t.throws(() => parseRedisUrl('redis+cluster://a:notaport'), { message: /host:port/ });
});

test('errors for want of a node are told from a wrong command', (t) => {
  class ClientOfflineError extends Error {}
  class ErrorReply extends Error {}
  t.true(isUnavailable(new ClientOfflineError('The client is offline')));
  t.true(isUnavailable(new ErrorReply('CLUSTERDOWN The cluster is down')));
  t.true(isUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7000'), { code: 'ECONNREFUSED' })));
  t.false(isUnavailable(new ErrorReply('ERR Error running script')));
  t.false(isUnavailable('CLUSTERDOWN'));
});
