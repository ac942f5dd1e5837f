import { appendFileSync } from 'node:fs';
import { installLoopbackGuard } from '../fuzz/loopback-only.js';

/**
 * Loaded into an agent's Node process with `--import` (through `NODE_OPTIONS`, so the processes it
 * starts load it too): name lookups other than localhost and socket connects beyond loopback are
 * refused before anything leaves the machine, and each is appended to the file named by
 * `AGENT_LOOPBACK_REPORT` as it happens, for the test to read.
 */
const report = process.env.AGENT_LOOPBACK_REPORT;
const guard = installLoopbackGuard();
for (const [kind, list] of [['lookup', guard.refusedLookups], ['connect', guard.refusedConnects]] as const) {
  const push = list.push.bind(list);
  list.push = (...hosts: string[]) => {
    if (report) for (const host of hosts) appendFileSync(report, `${kind} ${host}\n`);
    return push(...hosts);
  };
}
