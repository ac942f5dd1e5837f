import type { SealedSecret } from './crypto.js';

/** Messages from the request thread to the vault worker. */
export type VaultRequest =
  | { readonly id: number; readonly op: 'seal'; readonly recordId: string; readonly plaintext: string }
  | { readonly id: number; readonly op: 'unseal'; readonly recordId: string; readonly sealed: SealedSecret }
  | { readonly id: number; readonly op: 'rewrap'; readonly recordId: string; readonly sealed: SealedSecret }
  /** Key-file rotation: a new key becomes active, the old ones stay for unsealing (written to the file). */
  | { readonly id: number; readonly op: 'add-key' }
  /** Key-file rotation done: only the active key stays in the file. */
  | { readonly id: number; readonly op: 'drop-old-keys' };

/** The worker's answers, matched by `id`. */
export type VaultReply =
  | { readonly id: number; readonly sealed: SealedSecret }
  | { readonly id: number; readonly plaintext: string }
  | { readonly id: number; readonly activeKid: string }
  | { readonly id: number; readonly error: { readonly tampered: boolean; readonly message: string } };

/** The worker's first message. */
export type VaultReady = { readonly ready: true; readonly activeKid: string; readonly source: 'env' | 'file' } | { readonly ready: false; readonly message: string };
