// What teams and JWT callers add on the request path, in µs per request, measured in one run
// (issue 33's budgets: a team's key at most 10 µs more CPU than a virtual key, a JWT caller at most
// 30 µs more once its issuer's keys are cached):
// - the vault's resolver for a key of the `default` team (today's path) and for a key of a team with
//   allowed models and a default policy (team read from the one-second directory, policy applied);
// - the admission's team check (allowed models and providers);
// - a JWT caller: signature and claims verified with the issuer's cached keys, then mapped to a
//   service account by its subject; next to a virtual key's whole resolution.
//   npm run build && npx node dist/bench/org.js
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { JwtIssuers, jwtKeyResolver } from '../core/identity/jwt.js';
import { Organization } from '../core/org/organization.js';
import { organizationClaims } from '../core/org/sign-in.js';
import { OrganizationStore } from '../core/org/store.js';
import { checkTeamAccess } from '../core/vault/team-access.js';
import { VaultService } from '../core/vault/service.js';

async function timeAsync(label: string, iterations: number, work: () => unknown): Promise<number> {
  for (let index = 0; index < Math.min(iterations, 5000); index += 1) await work();
  const started = process.hrtime.bigint();
  for (let index = 0; index < iterations; index += 1) await work();
  const micros = Number(process.hrtime.bigint() - started) / 1000 / iterations;
  process.stdout.write(`${label.padEnd(66)} ${micros.toFixed(2).padStart(8)} µs/op  (${iterations} ops)\n`);
  return micros;
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-org-'));
let organization: Organization | undefined; // eslint-disable-line prefer-const -- set once the store is open, read by the vault's team lookup
const service = new VaultService({
  dataDir,
  redisPrefix: 'bench-org',
  environment: { GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') },
  credentialCacheMs: 60_000,
  outputTokenEstimate: 1024,
  teams: (id) => organization!.teams.get(id),
});
await service.start();
const store = new OrganizationStore(() => service.parts.state);
organization = new Organization(store, { accountKey: 'enabled', groupRules: [], jwtRules: [], invitationTtlMs: 3_600_000 });
await organization.ready();

// The issuer: one RS256 key, its JWK Set on loopback (fetched once, then cached).
const { publicKey, privateKey } = await generateKeyPair('RS256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
const issuerServer = createServer((request, response) => {
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify(request.url === '/jwks' ? { keys: [jwk] } : {}));
});
issuerServer.listen(0, '127.0.0.1');
await once(issuerServer, 'listening');
const issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;

try {
  const credential = await service.credentials.create({ name: 'bench', secret: { api_key: 'sk-bench-0123456789' } });
  const team = await store.createTeam({ name: 'bench-team', allowed_models: ['gpt-4o*'], allowed_providers: ['openai'], guardrail_policy: 'bench' });
  const plain = (await service.keys.create({ name: 'plain', provider: 'openai', credential_id: credential.id })).key;
  const teamKey = (await service.keys.create({ name: 'team', provider: 'openai', credential_id: credential.id, team_id: team.id })).key;
  const route = await service.parts.routes.create({ strategy: { mode: 'single' }, targets: [{ provider: 'openai', credential: credential.id }] } as never, 'bench-route', team.id);
  await store.createServiceAccount({ name: 'ci', team_id: team.id, role: 'member', jwt_subject: 'ci-bench', route: route.id });
  const issuers = new JwtIssuers([{ issuer, audience: ['llm-gateway'], algorithms: ['RS256'], jwksUri: `${issuer}/jwks` }]);
  const resolver = jwtKeyResolver(new JwtIssuers([{ issuer, audience: ['llm-gateway'], algorithms: ['RS256'], jwksUri: `${issuer}/jwks` }]), organizationClaims(organization, async (id) => id));
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ iss: issuer, aud: 'llm-gateway', sub: 'ci-bench', iat: now, exp: now + 3600 }).setProtectedHeader({ alg: 'RS256', kid: 'bench' }).sign(privateKey);

  process.stdout.write('\nteams and JWT callers on the request path (embedded store)\n');
  const base = await timeAsync('virtual key, default team: resolve (today\'s path)', 200_000, () => service.resolver.resolve(plain, {}));
  const teamed = await timeAsync('virtual key of a team (lists, default policy): resolve', 200_000, () => service.resolver.resolve(teamKey, {}));
  const check = await timeAsync('admission: the team read (cached) and its allowed models/providers', 200_000, async () => checkTeamAccess(await organization!.teams.get(team.id), 'gpt-4o-mini', 'openai'));
  // A token's first request checks its signature; the token's later requests reuse the verification.
  const fresh = await Promise.all(Array.from({ length: 2_000 }, (_, index) => new SignJWT({ iss: issuer, aud: 'llm-gateway', sub: 'ci-bench', jti: `t${index}`, iat: now, exp: now + 3600 }).setProtectedHeader({ alg: 'RS256', kid: 'bench' }).sign(privateKey)));
  let next = 0;
  await issuers.verify(fresh[0]!);
  const started = process.hrtime.bigint();
  for (next = 1; next < fresh.length; next += 1) await issuers.verify(fresh[next]!);
  process.stdout.write(`${'JWT caller: a token\'s first request (RS256 signature checked)'.padEnd(66)} ${(Number(process.hrtime.bigint() - started) / 1000 / (fresh.length - 1)).toFixed(2).padStart(8)} µs/op  (${fresh.length - 1} ops)\n`);
  await timeAsync('JWT caller: a token verified before (reused)', 20_000, () => issuers.verify(token));
  const jwt = await timeAsync('JWT caller: verify (reused) + map to its service account', 20_000, () => resolver.resolve(token, {}));
  process.stdout.write(`\nteam key over today's key: ${(teamed - base + check).toFixed(2)} µs per request (budget 10)\n`);
  process.stdout.write(`JWT caller over a virtual key: ${(jwt - base).toFixed(2)} µs per request (budget 30)\n`);
} finally {
  await service.close();
  issuerServer.close();
  rmSync(dataDir, { recursive: true, force: true });
}
