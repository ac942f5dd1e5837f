import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { eventHash, type AuditEvent } from '../../core/audit/event.js';
import { rowOf } from '../../core/audit/store.js';

const BIN = join(process.cwd(), 'bin/llm-gateway.js');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `llm-gateway …` (the package's bin, a child process) to its end, with `input` on stdin. */
export async function gatewayCommand(args: string[], environment: Record<string, string>, input = ''): Promise<Run> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...environment }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input);
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** The values of an event's row, in the order of {@link ROW_COLUMNS}, to put a row back or forge one. */
export const ROW_COLUMNS = ['seq', 'id', 'time', 'time_ms', 'actor', 'actor_type', 'actor_id', 'action', 'target', 'target_type', 'target_id', 'changes', 'outcome', 'address', 'user_agent', 'prev_hash', 'hash'];

/** An event's row, as the stores write it (to put a row back or forge one). */
export const rowValues = rowOf;

/** A well-formed event (its hash right) placed after `previous` at `seq`: what a forger who knows the format inserts. */
export function forgedAfter(previous: AuditEvent, seq: number): AuditEvent {
  const forged = { ...previous, id: `forged-${seq}`, seq, prev_hash: previous.hash, action: 'keys.delete', target: { type: 'virtual-key', id: 'vk_forged' } };
  return { ...forged, hash: eventHash(forged) };
}

/** The JSON lines of an export, parsed. */
export const jsonLines = (text: string): AuditEvent[] =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AuditEvent);
