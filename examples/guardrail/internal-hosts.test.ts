import test from 'ava';
import { BootError } from '../../core/errors.js';
import { askStream, judge, policyGateway, streaming } from '../../test/guardrails/helpers.js';
import { startGateway } from '../../test/harness.js';
import config from './gateway.config.js';
import { internalHosts } from './internal-hosts.js';

test('params are checked at boot', async (t) => {
  const error = await t.throwsAsync(startGateway({ policies: { p: { input: [internalHosts({ domains: ['Corp Internal'] })] } } }));
  t.true(error instanceof BootError);
  t.regex(error!.message, /policy "p", input guardrail #1 "internal-hosts": \/domains\/0 must match pattern/);
});

test('redacts internal hosts, denies in deny mode, leaves other text alone', async (t) => {
  const guardrail = internalHosts({ domains: ['corp.internal'] });
  t.deepEqual(await judge(guardrail, ['ssh build-01.corp.internal or ci.eu.corp.internal, not example.com']), {
    action: 'transform',
    texts: ['ssh [internal host] or [internal host], not example.com'],
    changes: { host: 2 },
    flagged: ['build-01.corp.internal', 'ci.eu.corp.internal'],
  });
  t.deepEqual(await judge(internalHosts({ domains: ['corp.internal'], action: 'deny' }), ['db.corp.internal']), { action: 'deny', reason: 'internal host name', flagged: ['db.corp.internal'] });
  t.deepEqual(await judge(guardrail, ['nothing internal 🙂']), { action: 'allow' });
});

test("the example config works through the gateway: a host split across stream chunks is redacted", async (t) => {
  const setup = await policyGateway(config.policies!['no-internal-hosts'], streaming(['Deploy to build-0', '1.corp.inte', 'rnal now.']));
  t.teardown(() => setup.close());
  t.deepEqual(await askStream(setup.client, 'where?'), { content: 'Deploy to [internal host] now.', finishReason: 'stop' });
});
