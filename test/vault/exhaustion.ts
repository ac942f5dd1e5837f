import type { TestGateway } from '../harness.js';
import { admin, chatWithKey } from './vault-harness.js';

/**
 * The key's usage once no reservation is left (the settle runs when each answer closes, which can
 * be just after the client has it): polls the usage API until `reserved_usd` is 0.
 */
export async function settledUsage(gateway: TestGateway, id: string): Promise<any> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
    if (usage.reserved_usd === 0) return usage;
    if (Date.now() > deadline) throw new Error(`a reservation of ${usage.reserved_usd} USD is still held`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Sends the fixed chat with `max_tokens` until the gateway refuses, each after the previous one has
 * settled (so what is left is always the budget less what was spent); the number answered and the refusal.
 */
export async function spendUntilRefused(gateway: TestGateway, key: { id: string; key: string }, maxTokens: number): Promise<{ answered: number; refusal: any }> {
  for (let answered = 0; answered < 100; answered += 1) {
    const answer = await chatWithKey(gateway, key.key, { max_tokens: maxTokens });
    await settledUsage(gateway, key.id);
    if (answer.status !== 200) return { answered, refusal: answer };
  }
  throw new Error('never refused');
}
