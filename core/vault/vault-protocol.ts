import type { SealedSecret } from './crypto.js';

/** Messages from the request thread to the vault worker. */
export type VaultRequest =
  | { readonly id: number; readonly op: 'seal'; readonly recordId: string; readonly plaintext: string }
  | { readonly id: number; readonly op: 'unseal'; readonly recordId: string; readonly sealed: SealedSecret }
  | { readonly id: number; readonly op: 'rewrap'; readonly recordId: string; readonly sealed: SealedSecret };

/** The worker's answers, matched by `id`. */
export type VaultReply =
  | { readonly id: number; readonly sealed: SealedSecret }
  | { readonly id: number; readonly plaintext: string }
  | { readonly id: number; readonly error: { readonly tampered: boolean; readonly message: string } };

/** The worker's first message. */
export type VaultReady = { readonly ready: true; readonly activeKid: string; readonly source: 'env' | 'file' } | { readonly ready: false; readonly message: string };
