import type { SealedSecret } from './crypto.js';

/** Messages from the request thread to the vault worker. */
export type VaultRequest =
  /** Seals under the master key `kid` (the shared current one), else under the worker's active key. */
  | { readonly id: number; readonly op: 'seal'; readonly recordId: string; readonly plaintext: string; readonly kid?: string }
  | { readonly id: number; readonly op: 'unseal'; readonly recordId: string; readonly sealed: SealedSecret }
  /** Re-wraps the data key under the master key `kid`, else under the worker's active key. */
  | { readonly id: number; readonly op: 'rewrap'; readonly recordId: string; readonly sealed: SealedSecret; readonly kid?: string }
  /** Key-file rotation: a new key becomes active, the old ones stay for unsealing (written to the file). */
  | { readonly id: number; readonly op: 'add-key' }
  /** Key-file rotation done: the file keeps the active key and the keys in `keep` (still used by records). */
  | { readonly id: number; readonly op: 'retire-keys'; readonly keep: readonly string[] };

/** The worker's answers, matched by `id`. */
export type VaultReply =
  | { readonly id: number; readonly sealed: SealedSecret }
  | { readonly id: number; readonly plaintext: string }
  | { readonly id: number; readonly activeKid: string }
  | { readonly id: number; readonly error: { readonly tampered: boolean; readonly missingKey?: boolean; readonly message: string } };

/** The worker's first message. */
export type VaultReady = { readonly ready: true; readonly activeKid: string; readonly source: 'env' | 'file' } | { readonly ready: false; readonly message: string };
