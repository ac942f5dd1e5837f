import { type GatewayConfig, resolveConfig } from '../../config/index.js';
import { OrganizationStore } from '../org/store.js';
import { COMMAND_HELP } from './help.js';
import { type CliIo, cliVaultService } from './vault.js';

/** How long the recovery link is valid. */
const RECOVERY_TTL_MS = 60 * 60 * 1000;

/**
 * `llm-gateway org recover --email <email>`: the owner's way back in, on the host (whoever runs it
 * can read the data dir and the master key already). Makes the user with that email an active owner
 * (creating it when needed) and prints a one-time sign-in link valid for an hour, which works even
 * with `auth.accountKey: 'disabled'`.
 */
export async function runOrgCli(argv: readonly string[], gatewayConfig: GatewayConfig, io: CliIo, json: boolean): Promise<number> {
  const args = argv.filter((entry) => entry !== '--json');
  const emailIndex = args.indexOf('--email');
  const email = emailIndex >= 0 ? args[emailIndex + 1] : args.find((entry) => entry.startsWith('--email='))?.slice('--email='.length);
  if (args[0] !== 'recover' || !email || !/^[^\s@]+@[^\s@]+$/.test(email)) {
    io.stderr.write(`${args[0] === 'recover' ? 'org recover needs --email <email>' : 'org needs an action'}\n\n${COMMAND_HELP.org}\n`);
    return 2;
  }
  const config = resolveConfig(gatewayConfig, io.environment);
  const service = cliVaultService(config, io.environment);
  try {
    await service.start();
    const store = new OrganizationStore(() => service.parts.state);
    await store.ensureDefaultTeam();
    const existing = await store.userByEmail(email);
    const user = existing
      ? (await store.updateUser(existing.id, { role: 'owner', status: existing.status === 'invited' ? 'invited' : 'active' }))!
      : await store.createUser({ email, role: 'owner', status: 'invited', source: 'cli' });
    const { token, expiresAt } = await store.invite(user.id, RECOVERY_TTL_MS);
    const origin = config.auth.publicUrl ?? `http://${config.host}:${config.port}`;
    const url = `${origin}/dashboard/invitations/${token}`;
    if (json) io.stdout.write(`${JSON.stringify({ user_id: user.id, email: user.email, role: 'owner', sign_in_url: url, expires_at: expiresAt })}\n`);
    else io.stdout.write(`${user.email} (${user.id}) is an active owner.\nSign in once, within the hour, at:\n${url}\n`);
    return 0;
  } finally {
    await service.close();
  }
}
