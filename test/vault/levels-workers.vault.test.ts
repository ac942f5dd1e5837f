import test from 'ava';
import { type Cluster, startCluster, stop } from '../cluster-harness.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY } from '../harness.js';
import { registerLevelCases } from './level-cases.js';
import { fixedUsageHandler } from './vault-harness.js';

/** Every level's limits on the embedded store with `GATEWAY_WORKERS=2`: two processes, counted once by the primary. */
let fake: Fake;
let slow: Fake;
let cluster: Cluster;

test.before(async () => {
  fake = await startFake(fixedUsageHandler());
  slow = await startFake(fixedUsageHandler(1500));
  cluster = await startCluster({ GATEWAY_API_KEY: ACCOUNT_KEY });
});

test.after.always(async () => {
  if (cluster && cluster.child.exitCode === null) await stop(cluster.child);
  await fake?.close();
  await slow?.close();
});

// Each request on a connection of its own (`connection: close`), so the cluster hands them to both workers.
registerLevelCases(test.serial, () => ({ a: cluster, b: cluster, upstream: fake.baseUrl, slowUpstream: slow.baseUrl }), 'GATEWAY_WORKERS=2 on the embedded store');
