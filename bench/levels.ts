// What admission at every level costs (issue 34's budget: five levels at most 20 µs more CPU than one
// level, and still one Redis round trip). The vault's admission hook runs on a request of a key with
// limits of its own only (one level), and on a request of a key that also has a team, a user, the
// organization, an end-user rule and a tag rule with limits (six levels), each with a budget, requests
// and tokens per minute. CPU per admission (process.cpuUsage) on the embedded store, then wall time on
// Redis when REDIS_URL is set (one EVAL per admission either way: the levels travel in one script).
//   npm run build && npx node dist/bench/levels.js
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@keyv/redis';
import { Organization } from '../core/org/organization.js';
import { OrganizationStore } from '../core/org/store.js';
import type { GatewayContext } from '../core/pipeline/context.js';
import { VaultService } from '../core/vault/service.js';

const LIMITS = { budget_usd: 1e6, requests_per_minute: 1e9, tokens_per_minute: 1e12 };

async function measure(label: string, iterations: number, work: () => Promise<unknown>): Promise<{ cpu: number; wall: number }> {
  for (let index = 0; index < 2000; index += 1) await work();
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let index = 0; index < iterations; index += 1) await work();
  const wall = Number(process.hrtime.bigint() - started) / 1000 / iterations;
  const used = process.cpuUsage(cpuBefore);
  const cpu = (used.user + used.system) / iterations;
  process.stdout.write(`${label.padEnd(62)} ${cpu.toFixed(2).padStart(8)} µs CPU/op ${wall.toFixed(2).padStart(8)} µs wall/op  (${iterations} ops)\n`);
  return { cpu, wall };
}

async function run(kind: string, environment: NodeJS.ProcessEnv): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-levels-'));
  let organization: Organization | undefined; // eslint-disable-line prefer-const -- set once the store is open
  const service = new VaultService({
    dataDir,
    redisUrl: environment.REDIS_URL,
    redisPrefix: environment.GATEWAY_REDIS_PREFIX ?? 'bench-levels',
    environment,
    credentialCacheMs: 60_000,
    outputTokenEstimate: 1024,
    teams: (id) => organization!.teams.get(id),
    principals: {
      team: (id) => organization!.teams.get(id),
      user: (id) => organization!.users.get(id),
      serviceAccount: (id) => organization!.serviceAccounts.get(id),
      organization: () => organization!.organizationLimits(),
    },
  });
  await service.start();
  const store = new OrganizationStore(() => service.parts.state);
  organization = new Organization(store, { accountKey: 'enabled', groupRules: [], jwtRules: [], invitationTtlMs: 3_600_000 });
  try {
    await organization.ready();
    const credential = await service.credentials.create({ name: 'bench', secret: { api_key: 'sk-bench-0123456789' } });
    const team = await store.createTeam({ name: `bench-${randomBytes(3).toString('hex')}`, limits: { ...LIMITS, end_users: LIMITS, tags: { feature: { '*': LIMITS } } } } as never);
    const user = await store.createUser({ email: `bench-${randomBytes(3).toString('hex')}@example.com`, status: 'active', source: 'cli', limits: LIMITS });
    await store.setOrganizationLimits(LIMITS);
    const oneKey = await service.keys.create({ name: 'one', provider: 'openai', credential_id: credential.id, team_id: null, limits: LIMITS });
    const sixKey = await service.keys.create({ name: 'six', provider: 'openai', credential_id: credential.id, team_id: team.id, user_id: user.id, limits: LIMITS });
    // As on the request path: the auth stage's lookup has cached each key's record.
    await service.keys.lookup(oneKey.key);
    await service.keys.lookup(sixKey.key);
    const [one, six] = [oneKey.record, sixKey.record];
    const admit = service.hooks.admit;
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello in one short sentence.' }], max_tokens: 64, user: 'end-user-1' };
    const context = (keyId: string) =>
      ({
        operation: 'chat',
        auth: { caller: { type: 'virtual-key', id: keyId, name: 'bench' }, provider: 'openai', target: { headers: {} } },
        request: { body, model: 'gpt-4o-mini', streaming: false },
        incoming: { headers: {}, method: 'POST', path: '/v1/chat/completions', search: '' },
        metadata: { feature: 'search' },
      }) as unknown as GatewayContext;
    const next = async () => {};
    process.stdout.write(`\nadmission by level (${kind})\n`);
    const iterations = kind === 'embedded' ? 50_000 : 5_000;
    const single = await measure('one level (the key): admit', iterations, () => admit.run(context(one.id), next));
    const all = await measure('six levels (key, end user, tag, user, team, organization): admit', iterations, () => admit.run(context(six.id), next));
    process.stdout.write(`six levels over one: +${(all.cpu - single.cpu).toFixed(2)} µs CPU per request (budget: 20), ×${(all.cpu / single.cpu).toFixed(2)}\n`);
  } finally {
    await store.setOrganizationLimits(null);
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const masterKey = randomBytes(32).toString('hex');
await run('embedded', { GATEWAY_MASTER_KEY: masterKey });
if (process.env.REDIS_URL) {
  const prefix = `bench-levels-${process.pid}`;
  await run('Redis, one EVAL per admission', { GATEWAY_MASTER_KEY: masterKey, REDIS_URL: process.env.REDIS_URL, GATEWAY_REDIS_PREFIX: prefix });
  const client = createClient({ url: process.env.REDIS_URL });
  await client.connect();
  for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) if (keys.length > 0) await client.del(keys);
  await client.close();
}
