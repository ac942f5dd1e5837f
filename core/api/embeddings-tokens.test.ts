import test from 'ava';
import { GatewayError } from '../errors.js';
import { checkEmbeddingTokenLimit, surelyOverLimit, type WithinLimit } from './embeddings-tokens.js';

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

test('long unbroken runs are judged in bounded time, and still refused when surely over the limit (issue 14 fuzz finding)', async (t) => {
  // Whole, 160,000 characters without a space took ~24 s of the event loop (BPE cost grows with the
  // square of a run's length): the tokenizer now only ever sees pieces of at most 1000 characters.
  const pieces: number[] = [];
  const spy: WithinLimit = (text) => {
    pieces.push(text.length);
    return Math.ceil(text.length / 4);
  };
  t.true(await surelyOverLimit('x'.repeat(160_000), 8192, spy));
  t.true(Math.max(...pieces) <= 1000);
  t.true(pieces.length < 40, 'it stops as soon as the limit is surely passed');
  // Text with spaces is cut before a space and counted exactly; a cut inside a run is discounted.
  pieces.length = 0;
  t.false(await surelyOverLimit('abcd '.repeat(6000), 8192, () => 250), '30 exact pieces of 250 tokens: 7500');
  t.false(await surelyOverLimit('x'.repeat(33_000), 8192, () => 249), '33 pieces of 249 tokens (8217) minus 32 cuts: within');
  t.true(await surelyOverLimit('x'.repeat(34_000), 8192, () => 249), '34 pieces (8466) minus 33 cuts is over');
  for (const input of ['x'.repeat(160_000), '中文'.repeat(20_000), 'ab1-'.repeat(100_000)]) {
    t.is((await t.throwsAsync(check('text-embedding-3-small', input), { instanceOf: GatewayError }))?.body.param, 'input');
  }
});
