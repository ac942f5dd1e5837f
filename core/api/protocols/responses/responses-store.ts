import type { Caller } from '../../../spec/key-resolver.js';
import type { ResponseItem, ResponseObject } from '../../../spec/responses.js';
import type { SealedSecret } from '../../../vault/crypto.js';

/** One stored response: what `GET /v1/responses/{id}` answers and what `previous_response_id` continues. */
export interface StoredResponse {
  readonly id: string;
  /** The key that created it ({@link ownerOf}); no other key reads it. */
  readonly owner: string;
  /** Epoch ms. */
  readonly createdMs: number;
  /** The provider that answered (reasoning and provider item ids are replayed only to it). */
  readonly provider: string;
  readonly previousId: string | null;
  /** This request's input items (with ids). */
  readonly input: ResponseItem[];
  /** The Response as finished, its reasoning sealed (the client sees `encrypted_content` only when it asks). */
  readonly response: ResponseObject;
  /**
   * What the input guardrails' restorers carry to the next turn (a masking guardrail's placeholders
   * and values: `ConversationMask`), sealed by the vault; absent when nothing was masked.
   */
  readonly mask?: SealedSecret;
}

/**
 * Where Responses state is kept: the log store's backend (PostgreSQL with `DATABASE_URL`, else an
 * embedded SQLite file). Every read and delete is scoped to the owner, so one key never reads
 * another's responses (they are simply not found).
 */
export interface ResponseStore {
  readonly kind: 'sqlite' | 'postgres';
  init(): Promise<void>;
  put(record: StoredResponse): Promise<void>;
  get(owner: string, id: string): Promise<StoredResponse | undefined>;
  /** Whether it existed. */
  delete(owner: string, id: string): Promise<boolean>;
  /** Deletes what is older than the retention; returns how many. */
  prune(now?: number): Promise<number>;
  close(): Promise<void>;
}

/** The owner of what a caller stores: the account key, or one virtual key. */
export const ownerOf = (caller: Caller): string => (caller.type === 'account' ? 'account' : `vk:${caller.id}`);

/** An item of a rebuilt conversation, with the provider whose answer it was (undefined: the client's input). */
export interface ConversationItem {
  readonly item: ResponseItem;
  readonly provider?: string;
}

/** The longest chain of `previous_response_id` links followed. */
const MAX_CHAIN = 10_000;

/**
 * The conversation up to and including `id`: every earlier response's input and output items, in
 * order, then this one's input and (with `withOutput`) its output. Undefined when `id` is not the
 * owner's. A link that has expired or was deleted ends the chain there.
 */
export async function conversationOf(store: ResponseStore, owner: string, id: string, withOutput: boolean): Promise<ConversationItem[] | undefined> {
  const chain: StoredResponse[] = [];
  let next: string | null = id;
  while (next !== null && chain.length < MAX_CHAIN) {
    const record = await store.get(owner, next);
    if (!record) {
      if (chain.length === 0) return undefined;
      break;
    }
    chain.unshift(record);
    next = record.previousId;
  }
  const items: ConversationItem[] = [];
  chain.forEach((record, index) => {
    for (const item of record.input) items.push({ item });
    if (withOutput || index < chain.length - 1) for (const item of record.response.output) items.push({ item, provider: record.provider });
  });
  return items;
}
