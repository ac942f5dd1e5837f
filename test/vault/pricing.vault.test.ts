import test from 'ava';
import { expectedOutputTokens, promptTokensBound, REQUEST_OVERHEAD_TOKENS } from '../../core/vault/estimate.js';
import { CATALOGUE_VERSION, costOf, PriceTable, tokenCounts } from '../../core/vault/pricing.js';

const table = new PriceTable();

// Hand-computed: (uncached prompt × input + cached × cached-input + completion × output) / 1e6.
const cases: Array<[provider: string, model: string, prompt: number, cached: number, completion: number, expectedUsd: number]> = [
  // 1000 × 2.50 + 0 + 500 × 10 = 2500 + 5000 = 7500 → 0.0075
  ['openai', 'gpt-4o', 1000, 0, 500, 0.0075],
  // (1000 − 600) × 2.50 + 600 × 1.25 + 500 × 10 = 1000 + 750 + 5000 = 6750 → 0.00675
  ['openai', 'gpt-4o-2024-08-06', 1000, 600, 500, 0.00675],
  // (2000 − 1000) × 0.15 + 1000 × 0.075 + 300 × 0.60 = 150 + 75 + 180 = 405 → 0.000405
  ['openai', 'gpt-4o-mini', 2000, 1000, 300, 0.000405],
  // (10 000 − 4000) × 2 + 4000 × 0.5 + 2000 × 8 = 12 000 + 2000 + 16 000 = 30 000 → 0.03
  ['openai', 'gpt-4.1', 10_000, 4000, 2000, 0.03],
  // (5000 − 1000) × 3 + 1000 × 0.30 + 1000 × 15 = 12 000 + 300 + 15 000 = 27 300 → 0.0273
  ['anthropic', 'claude-sonnet-4-20250514', 5000, 1000, 1000, 0.0273],
  // 1 000 000 × 0.80 + 0 + 200 000 × 4 = 800 000 + 800 000 = 1 600 000 → 1.6
  ['anthropic', 'claude-3-5-haiku-20241022', 1_000_000, 0, 200_000, 1.6],
  // (100 000 − 50 000) × 1.25 + 50 000 × 0.125 + 10 000 × 10 = 62 500 + 6250 + 100 000 = 168 750 → 0.16875 (the catalogue's cached price)
  ['google', 'gemini-2.5-pro', 100_000, 50_000, 10_000, 0.16875],
  // 3000 × 15 + 0 + 1000 × 60 = 45 000 + 60 000 = 105 000 → 0.105
  ['openai', 'o1', 3000, 0, 1000, 0.105],
];

for (const [provider, model, prompt, cached, completion, expected] of cases) {
  test(`cost of ${provider}/${model}: ${prompt} prompt (${cached} cached), ${completion} completion = $${expected}`, (t) => {
    const price = table.price(provider, model);
    t.truthy(price, 'the model is in the shipped catalogue');
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: cached } };
    t.is(Number(costOf(price!, tokenCounts(usage)).toFixed(12)), expected);
  });
}

test('the shipped catalogue carries its version', (t) => {
  t.regex(CATALOGUE_VERSION, /^\d+\.\d+\.\d+$/);
});

test('cached tokens beyond the prompt are capped; a model without a cached price pays the input price', (t) => {
  t.is(costOf({ input: 1, output: 2 }, { promptTokens: 100, completionTokens: 0, cachedPromptTokens: 100 }), 0.0001);
  t.is(costOf({ input: 1, output: 2, cachedInput: 0.5 }, { promptTokens: 100, completionTokens: 0, cachedPromptTokens: 500 }), 0.00005);
});

test('unknown models follow the configured policy: refuse, zero, or a default price', (t) => {
  t.is(new PriceTable().price('openai', 'my-finetune'), undefined);
  t.deepEqual(new PriceTable({ unknownModel: 'zero' }).price('openai', 'my-finetune'), { input: 0, output: 0 });
  t.deepEqual(new PriceTable({ unknownModel: { input: 5, output: 5 } }).price('nobody', 'x'), { input: 5, output: 5 });
});

test('the configuration overrides and extends the shipped prices', (t) => {
  const custom = new PriceTable({ models: { openai: { 'gpt-4o': { input: 1, output: 1 } }, local: { 'llama-3-8b': { input: 0.01, output: 0.02 } } } });
  t.deepEqual(custom.price('openai', 'gpt-4o'), { input: 1, output: 1 });
  t.deepEqual(custom.price('local', 'llama-3-8b'), { input: 0.01, output: 0.02 });
  t.deepEqual(custom.price('openai', 'gpt-4o-mini'), table.price('openai', 'gpt-4o-mini'), 'the rest of the table stays');
});

test('prompt tokens are bounded by the UTF-8 bytes of the text sent as JSON, plus the request overhead; images skipped', (t) => {
  t.is(promptTokensBound({ messages: [{ role: 'user', content: 'abcdefgh' }] }), 38 + REQUEST_OVERHEAD_TOKENS); // [{"role":"user","content":"abcdefgh"}]
  t.is(
    promptTokensBound({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'abcd' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(10_000)}` } }] }],
    }),
    // [{"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image_url"}]}]: the 10 000-character image is skipped
    '[{"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image_url"}]}]'.length + REQUEST_OVERHEAD_TOKENS,
  );
  t.is(promptTokensBound({ input: 'x'.repeat(400) }), 402 + REQUEST_OVERHEAD_TOKENS);
  t.is(promptTokensBound(undefined), 0);
});

test('expected output tokens: max_completion_tokens or max_tokens times n, else the fallback', (t) => {
  t.deepEqual(expectedOutputTokens({ max_tokens: 50 }, 1024), { tokens: 50, bounded: true });
  t.deepEqual(expectedOutputTokens({ max_completion_tokens: 70, max_tokens: 50, n: 2 }, 1024), { tokens: 140, bounded: true });
  t.deepEqual(expectedOutputTokens({}, 1024), { tokens: 1024, bounded: false });
});
