import { type AuditEvent, eventHash, GENESIS_HASH } from './event.js';
import type { ChainHead } from './store.js';

/** `audit verify`'s answer: the whole chain, or its first bad event. */
export type VerifyResult =
  | { readonly ok: true; readonly count: number; readonly head?: ChainHead }
  | {
      readonly ok: false;
      /** The first bad event's `seq` (for a removed one, the seq it had). */
      readonly seq: number;
      /** Its id; null for a removed event, whose id went with it. */
      readonly id: string | null;
      readonly problem: 'changed' | 'removed' | 'inserted';
      readonly reason: string;
    };

const bad = (seq: number, id: string | null, problem: 'changed' | 'removed' | 'inserted', reason: string): VerifyResult => ({ ok: false, seq, id, problem, reason });

/** Whether `event`'s stored hash is the hash of its fields with `seq` moved by `shift` (a renumbered event). */
const sealedAt = (event: AuditEvent, shift: number) => eventHash({ ...event, seq: event.seq + shift }) === event.hash;

/**
 * Walks the chain oldest first and names the first event that was changed, removed or inserted.
 * `start` is where the kept chain begins: the genesis, or the anchor retention recorded (the last
 * removed event's seq and hash). Every event must hash to its `hash`, follow the one before it
 * (`seq` + 1) and carry its hash as `prev_hash`. When an event fails, its neighbours tell which it
 * was: an event renumbered by one (its hash holds for `seq` - 1) follows an inserted one; an event
 * whose hash holds for `seq` + 1 follows a removed one.
 */
export async function verifyChain(events: AsyncIterable<AuditEvent>, start: ChainHead = { seq: 0, hash: GENESIS_HASH }): Promise<VerifyResult> {
  const iterator = events[Symbol.asyncIterator]();
  const pull = async () => {
    const step = await iterator.next();
    return step.done ? undefined : step.value;
  };
  let previous: ChainHead & { id?: string } = start;
  let current = await pull();
  let count = 0;
  while (current !== undefined) {
    const next = await pull();
    if (current.hash !== eventHash(current)) {
      if (previous.id !== undefined && sealedAt(current, -1)) return bad(previous.seq, previous.id, 'inserted', `event ${previous.seq} was inserted: the events after it were renumbered`);
      if (next !== undefined && sealedAt(next, -1) && next.prev_hash === previous.hash) return bad(current.seq, current.id, 'inserted', `event ${current.seq} was inserted: the event after it follows the one before it`);
      if (sealedAt(current, 1)) return bad(current.seq, null, 'removed', `event ${current.seq} was removed and the events after it renumbered`);
      return bad(current.seq, current.id, 'changed', `event ${current.seq} was changed: its contents do not match its hash`);
    }
    if (current.seq !== previous.seq + 1) {
      const missing = current.seq - 1 === previous.seq + 1 ? `${previous.seq + 1}` : `${previous.seq + 1} to ${current.seq - 1}`;
      return bad(previous.seq + 1, null, 'removed', `event ${missing} ${current.seq - 1 === previous.seq + 1 ? 'was' : 'were'} removed: the chain goes from ${previous.seq} to ${current.seq}`);
    }
    if (current.prev_hash !== previous.hash) {
      return previous.id === undefined
        ? bad(current.seq, current.id, 'changed', `event ${current.seq} does not follow the chain's start (its prev_hash is not the ${previous.seq === 0 ? 'genesis' : 'retention anchor'})`)
        : bad(previous.seq, previous.id, 'changed', `event ${previous.seq} was replaced: the event after it does not carry its hash`);
    }
    previous = { seq: current.seq, hash: current.hash, id: current.id };
    count++;
    current = next;
  }
  return { ok: true, count, ...(previous.id === undefined ? {} : { head: { seq: previous.seq, hash: previous.hash } }) };
}
