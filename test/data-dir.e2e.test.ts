import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { startGateway } from './harness.js';

test('a data directory the gateway creates is private to its user (0700): it holds the vault, keys and logs', async (t) => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gateway-data-')), 'fresh', 'data');
  const gateway = await startGateway({}, { GATEWAY_DATA_DIR: dataDir });
  try {
    await fetch(`${gateway.url}/health`).then((response) => response.arrayBuffer());
    await gateway.gateway.flushLogs();
    t.is(statSync(dataDir).mode & 0o777, 0o700);
    t.true(readdirSync(dataDir).length > 0, 'the stores live there');
  } finally {
    await gateway.close();
  }
});
