import type { Pool } from 'undici';
import { fastProvider } from '../test/logs/sink-harness.js';

// What the log benches (log-overhead.ts, log-sinks.ts) share: the in-process mock they call and the
// chat requests they send through the gateway.

const COMPLETION = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, how can I help?' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 8, total_tokens: 18 },
});

const BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Say hello in a friendly way, please.' }] });

/** A loopback mock of OpenAI answering every chat at once with a short completion. */
export const startChatMock = (): Promise<{ url: string; close(): void }> => fastProvider(COMPLETION);

/** Sends `total` chat requests through `client` (a pool on the gateway), 50 at a time, to the mock at `mockUrl`; `answered` sees each status. */
export async function sendChats(client: Pool, target: { key: string; mockUrl: string }, total: number, answered: (status: number) => void = () => {}): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next++ < total) {
        const answer = await client.request({
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-gateway-api-key': target.key, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': target.mockUrl, authorization: 'Bearer sk-bench' },
          body: BODY,
        });
        answered(answer.statusCode);
        await answer.body.dump();
      }
    }),
  );
}
