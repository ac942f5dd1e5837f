import type { ChatAdapter, EmbedAdapter, ProviderTarget } from '../../../core/spec/index.js';
import { type ChatQuirks, compatibleChatAdapter, compatibleEmbedAdapter } from '../openai-compatible/index.js';
import { accountOf, accountRoot } from './cloudflare-target.js';

/**
 * What Workers AI's OpenAI-compatible endpoint is known to differ in: nothing documented, so only
 * the conservative choices: one choice per request (`n` > 1 refused), no `developer` role (sent as
 * `system`). See docs/providers/cloudflare-workers-ai.md for what could not be checked.
 */
export const CLOUDFLARE_CHAT_QUIRKS: ChatQuirks = { n: false };

/** The target with its base URL moved to the account's OpenAI-compatible root (`…/accounts/<id>/ai/v1`). */
const onAccount = (target: ProviderTarget, accountId: string | undefined): ProviderTarget => ({
  ...target,
  baseUrl: `${accountRoot(target.baseUrl, accountOf(target, accountId))}/v1`,
});

/** Chat through `POST /accounts/<id>/ai/v1/chat/completions` (OpenAI's shape, plain and streamed). */
export function cloudflareChat(accountId: string | undefined): ChatAdapter {
  const inner = compatibleChatAdapter({ provider: 'cloudflare-workers-ai', quirks: CLOUDFLARE_CHAT_QUIRKS });
  return { ...inner, toUpstream: (request, target, original) => inner.toUpstream(request, onAccount(target, accountId), original) };
}

/** Embeddings through `POST /accounts/<id>/ai/v1/embeddings` (OpenAI's shape). */
export function cloudflareEmbed(accountId: string | undefined): EmbedAdapter {
  const inner = compatibleEmbedAdapter({ provider: 'cloudflare-workers-ai' });
  return { ...inner, toUpstream: (request, target, original) => inner.toUpstream(request, onAccount(target, accountId), original) };
}

/**
 * Pass-through: `/v1/run/<model>` reaches the native `POST /accounts/<id>/ai/run/<model>` (any task,
 * Cloudflare's own body and `{result, success, errors, messages}` answer); any other path goes under
 * the account's OpenAI-compatible root (`/v1/responses`, for instance).
 */
export function cloudflarePassthroughUrl(accountId: string | undefined): (pathAndQuery: string, target: ProviderTarget) => string {
  return (pathAndQuery, target) => {
    const root = accountRoot(target.baseUrl, accountOf(target, accountId));
    return pathAndQuery.startsWith('/run/') ? `${root}${pathAndQuery}` : `${root}/v1${pathAndQuery}`;
  };
}
