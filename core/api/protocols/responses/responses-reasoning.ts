import { isRecord } from '../../../spec/is-record.js';

/**
 * Reasoning a provider signs (a thinking block's signature, redacted thinking's data) must come back
 * unchanged on the next turn. A Responses client carries it in a reasoning item's
 * `encrypted_content`, which the gateway fills with this opaque envelope: the provider that made it
 * and the blocks as the unified chat answer gave them. It is only ever replayed to that provider.
 */

/** A reasoning block of a unified chat answer (`content_blocks`). */
export type ReasoningBlock = { type: 'thinking'; text: string; signature?: string } | { type: 'redacted_thinking'; data: string };

const PREFIX = 'gw1.';

/** The envelope of `blocks` made by `provider`. */
export function sealReasoning(provider: string, blocks: readonly ReasoningBlock[]): string {
  return PREFIX + Buffer.from(JSON.stringify({ provider, blocks })).toString('base64url');
}

/** The blocks of an envelope made by `provider`; undefined for another provider's, or for content the gateway did not make. */
export function openReasoning(encrypted: unknown, provider: string): ReasoningBlock[] | undefined {
  if (typeof encrypted !== 'string' || !encrypted.startsWith(PREFIX)) return undefined;
  try {
    const value = JSON.parse(Buffer.from(encrypted.slice(PREFIX.length), 'base64url').toString('utf8')) as unknown;
    if (!isRecord(value) || value.provider !== provider || !Array.isArray(value.blocks)) return undefined;
    return value.blocks.filter(
      (block): block is ReasoningBlock =>
        isRecord(block) && ((block.type === 'thinking' && typeof block.text === 'string') || (block.type === 'redacted_thinking' && typeof block.data === 'string')),
    );
  } catch {
    return undefined;
  }
}
