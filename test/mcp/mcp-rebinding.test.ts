import type { LookupFunction } from 'node:net';
import { pino } from 'pino';
import test from 'ava';
import { McpGateway } from '../../core/mcp/gateway.js';
import { FakeMcpServer } from './mcp-harness.js';

// Upstream MCP connections resolve names through the custom-host policy's connect-time lookup, so a
// name that passed the check and was re-pointed since (DNS rebinding) is still refused.

function gatewayWith(lookup: LookupFunction): McpGateway {
  return new McpGateway({
    vault: () => {
      throw new Error('not used by a probe without a credential');
    },
    isAccountKey: () => false,
    checkUrl: async () => {},
    connectLookup: lookup,
    stdio: [],
    refreshMs: 60_000,
    bodyLimitBytes: 1024 * 1024,
    sinks: [],
    bodiesOn: () => false,
    logger: pino({ level: 'silent' }),
    policy: () => undefined,
  });
}

test('a name resolving to a refused address at connect time is not reached; an allowed one is', async (t) => {
  const fake = await new FakeMcpServer().start();
  t.teardown(() => fake.stop());
  const url = fake.url.replace('127.0.0.1', 'mcp.internal.test');
  const lookups: string[] = [];
  const refusing: LookupFunction = (hostname, _options, callback) => {
    lookups.push(hostname);
    callback(Object.assign(new Error(`custom host ${hostname} resolves only to refused addresses`), { code: 'EREFUSEDHOST' }), '', 4);
  };
  const refused = gatewayWith(refusing);
  t.teardown(() => refused.close());
  const probe = await refused.catalogue.probe({ name: 'rebound', transport: 'streamable-http', url });
  t.is(probe.status, 'unreachable');
  t.deepEqual(lookups.slice(0, 1), ['mcp.internal.test']);
  t.is(fake.headers.length, 0);

  const resolving: LookupFunction = (_hostname, options, callback) => {
    if (options.all) (callback as unknown as (error: null, addresses: Array<{ address: string; family: number }>) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
  };
  const allowed = gatewayWith(resolving);
  t.teardown(() => allowed.close());
  const reached = await allowed.catalogue.probe({ name: 'allowed', transport: 'streamable-http', url });
  t.is(reached.status, 'ok');
  t.true(fake.headers.length > 0);
});
