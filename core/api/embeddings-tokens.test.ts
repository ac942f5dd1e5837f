import test from 'ava';
import { GatewayError } from '../errors.js';
import { checkEmbeddingTokenLimit } from './embeddings-tokens.js';

const check = (model: string, input: string | string[] | number[] | number[][]) => checkEmbeddingTokenLimit({ model, input });

// " hello" is one cl100k_base token (6 bytes), so the byte length is far over the limit long before the token count is.
test('a string of exactly 8192 tokens passes and 8193 is refused, for every OpenAI embedding model', async (t) => {
  for (const model of ['text-embedding-ada-002', 'text-embedding-3-small', 'text-embedding-3-large']) {
    await t.notThrowsAsync(check(model, ' hello'.repeat(8192)));
    const error = await t.throwsAsync(check(model, ' hello'.repeat(8193)), { instanceOf: GatewayError });
    t.is(error?.body.param, 'input');
    t.regex(error?.message ?? '', new RegExp(`8192-token limit of ${model}`));
  }
});

test('token arrays are measured by length, per input', async (t) => {
  const tokens = (count: number) => Array.from({ length: count }, () => 15339);
  await t.notThrowsAsync(check('text-embedding-ada-002', tokens(8192)));
  t.is((await t.throwsAsync(check('text-embedding-ada-002', tokens(8193)), { instanceOf: GatewayError }))?.body.param, 'input');
  t.is((await t.throwsAsync(check('text-embedding-ada-002', [[1], tokens(8193)]), { instanceOf: GatewayError }))?.body.param, 'input[1]');
});

test('special-token text is ordinary text, not an error', async (t) => {
  await t.notThrowsAsync(check('text-embedding-3-small', '<|endoftext|> '.repeat(1000)));
});

test('multi-byte text under the limit in bytes is never refused; other models are not checked', async (t) => {
  await t.notThrowsAsync(check('text-embedding-3-small', 'é'.repeat(4096)));
  await t.notThrowsAsync(check('my-embedder', ' hello'.repeat(20_000)));
});
