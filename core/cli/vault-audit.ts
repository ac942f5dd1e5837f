import { userInfo } from 'node:os';
import { type GatewayConfig, type ResolvedConfig, resolveConfig } from '../../config/index.js';
import type { CliIo } from '../cli-io.js';
import { type AuditChanges, auditChanges, type AuditTarget } from '../audit/event.js';
import { openAuditTrail } from '../audit/index.js';

/** A change a command made, to record once it is done. */
export interface NotedChange {
  readonly action: string;
  readonly target?: AuditTarget;
  readonly changes?: AuditChanges;
}

/** The commands that change something (the others only read, and are not recorded). */
const CHANGING: Readonly<Record<string, string>> = {
  'credentials create': 'credentials.create',
  'credentials rotate': 'credentials.rotate',
  'credentials delete': 'credentials.delete',
  'keys create': 'keys.create',
  'keys update': 'keys.update',
  'keys rotate': 'keys.rotate',
  'keys delete': 'keys.delete',
  'rotate-master-key': 'master-key.rotate',
};

/** The audit action of a command line (`keys update` → `keys.update`), or undefined for a reading one. */
export function changingAction(group: string, action: string | undefined): string | undefined {
  return CHANGING[group === 'rotate-master-key' ? group : `${group} ${action}`];
}

/** What a command's result says changed: the target and, for a record it made or changed, its fields (secrets never). */
export function noted(action: string, target: AuditTarget, before?: object, after?: object): NotedChange {
  const changes = before === undefined && after === undefined ? undefined : auditChanges(before as Record<string, unknown>, after as Record<string, unknown>);
  return { action, target, ...(changes === undefined ? {} : { changes }) };
}

/** The operator on the host, as the audit trail names the command line's actor. */
function operator(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}

/**
 * Records a command's changes (or its failure) in the audit trail the gateway writes, from the
 * host's command line (`actor.type: 'cli'`, labelled with the OS user). Throws when the trail
 * cannot be written: the command then fails, saying its change was made.
 */
export async function recordCliChanges(config: ResolvedConfig, changes: readonly NotedChange[], outcome: 'success' | 'failure'): Promise<void> {
  if (changes.length === 0) return;
  const audit = openAuditTrail(config);
  const label = operator();
  try {
    for (const change of changes) await audit.record({ actor: { type: 'cli', ...(label ? { label } : {}) }, ...change, outcome });
  } finally {
    await audit.close();
  }
}

/** Records a host command's change (`reset-account-key`): 0, or 1 saying the change was made but not recorded. */
export async function recordHostChange(config: GatewayConfig, io: CliIo, change: NotedChange): Promise<number> {
  try {
    await recordCliChanges(resolveConfig(config, io.environment), [change], 'success');
    return 0;
  } catch (error) {
    io.stderr.write(`error: the change was made, but the audit trail could not record it: ${(error as Error).message}\n`);
    return 1;
  }
}
