import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { assertRefused, bootError, judge } from '../../../test/guardrails/helpers.js';
import { startVendorFake, TRIGGER, type VendorBehaviour, vendorContract } from '../../../test/guardrails/vendor-contract.js';
import { DEFAULT_JSON_PROMPT, llmJudge, parseJsonVerdict, parseLlamaGuard } from './index.js';

const KEY = 'sk-judge-test-0123456789';
const fixture = (name: string) => JSON.parse(readFileSync(join(process.cwd(), 'plugins/guardrails/llm-judge/__fixtures__', name), 'utf8'));

/** The text judged: the last message (Llama Guard), or what the json format's user message wraps. */
const judgedText = (messages: Array<{ role: string; content: string }>) => {
  const last = messages[messages.length - 1].content;
  const wrapped = /<<<\n([\s\S]*)\n>>>$/.exec(last);
  return wrapped ? wrapped[1] : last;
};

const completion = (content: string) => ({ ...fixture('llama-guard-safe.json'), choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });

/** An OpenAI-compatible chat server serving a Llama Guard model (or, with `json`, any model with a prompt). */
const behaviourFor = (format: 'llama-guard' | 'json', key: string | null = KEY): VendorBehaviour => ({
  check(request) {
    const problems: string[] = [];
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') problems.push(`${request.method} ${request.url}`);
    if (request.headers.authorization !== (key === null ? undefined : `Bearer ${key}`)) problems.push('authorization');
    const body = request.json();
    if (typeof body.model !== 'string' || !Array.isArray(body.messages) || body.messages.length === 0) problems.push('model and messages');
    if (body.temperature !== 0 || body.stream !== false) problems.push('temperature 0, not streamed');
    if (format === 'json' && body.messages[0]?.role !== 'system') problems.push('the json format sends its prompt as the system message');
    return problems;
  },
  texts: (request) => [judgedText(request.json().messages)],
  answer: (_request, unsafe) =>
    format === 'json'
      ? { body: completion(unsafe[0] ? '```json\n{"verdict": "deny", "reason": "threat of violence"}\n```' : '{"verdict": "allow"}') }
      : { body: fixture(unsafe[0] ? 'llama-guard-unsafe.json' : 'llama-guard-safe.json') },
  error: { status: 503, body: fixture('error.json') },
});

vendorContract(test, { id: 'llm-judge', secret: KEY, behaviour: behaviourFor('llama-guard'), make: (origin) => llmJudge({ baseUrl: `${origin}/v1`, apiKey: KEY, model: 'meta-llama/Llama-Guard-3-8B' }) });

test('params: baseUrl and model; a prompt only with the json format', (t) => {
  assertRefused(t, llmJudge({ baseUrl: 'http://127.0.0.1:1/v1' } as never), 'model');
  assertRefused(t, llmJudge({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', prompt: 'judge' }), 'json format only');
  assertRefused(t, llmJudge({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', categories: ['violence'] }), '/categories');
  t.is(bootError(llmJudge({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', format: 'json', prompt: 'judge', credential: 'cred_x' })), undefined);
});

test.serial('Llama Guard: the input as the user turn, an answer as the assistant turn; unsafe categories, and the categories that count', async (t) => {
  const vendor = await startVendorFake(behaviourFor('llama-guard', null));
  t.teardown(() => vendor.close());
  const base = { baseUrl: `${vendor.origin}/v1`, model: 'meta-llama/Llama-Guard-3-8B' };
  t.deepEqual(await judge(llmJudge(base), ['hello']), { action: 'allow' });
  t.deepEqual(vendor.fake.requests[0].json().messages, [{ role: 'user', content: 'hello' }]);
  t.deepEqual(await judge(llmJudge(base), [TRIGGER], { side: 'output' }), { action: 'deny', reason: 'llm-judge: unsafe (S1)' });
  t.deepEqual(vendor.fake.requests[1].json().messages.at(-1), { role: 'assistant', content: TRIGGER });
  t.deepEqual(await judge(llmJudge({ ...base, categories: ['S10', 'S11'] }), [TRIGGER]), { action: 'allow' });
  t.deepEqual(await judge(llmJudge({ ...base, categories: ['S1'] }), [TRIGGER]), { action: 'deny', reason: 'llm-judge: unsafe (S1)' });
  t.is(vendor.fake.requests[0].json().max_tokens, 64);
  t.deepEqual(vendor.problems, []);
});

test.serial('a JSON verdict with a prompt: the default prompt as the system message, the reason kept', async (t) => {
  const vendor = await startVendorFake(behaviourFor('json'));
  t.teardown(() => vendor.close());
  const guardrail = llmJudge({ baseUrl: `${vendor.origin}/v1`, apiKey: KEY, model: 'gpt-4o-mini', format: 'json' });
  t.deepEqual(await judge(guardrail, ['What is 2+2?']), { action: 'allow' });
  const sent = vendor.fake.requests[0].json();
  t.deepEqual(sent.messages[0], { role: 'system', content: DEFAULT_JSON_PROMPT });
  t.is(sent.messages[1].content, 'The user prompt to judge:\n<<<\nWhat is 2+2?\n>>>');
  t.deepEqual(await judge(guardrail, [`I will ${TRIGGER} you`]), { action: 'deny', reason: 'llm-judge: threat of violence' });
  t.deepEqual(vendor.problems, []);
});

test.serial('an answer that does not parse is an error (so fail-closed denies), not an allow', async (t) => {
  const vendor = await startVendorFake({ ...behaviourFor('llama-guard'), answer: () => ({ body: completion('I think this is probably fine.') }) });
  t.teardown(() => vendor.close());
  await t.throwsAsync(judge(llmJudge({ baseUrl: `${vendor.origin}/v1`, apiKey: KEY, model: 'm' }), ['x']), { message: "llm-judge: the model's answer is not a Llama Guard verdict" });
});

test('the parsers: Llama Guard lines and JSON verdicts, strictly', (t) => {
  t.deepEqual(parseLlamaGuard('\n\nsafe'), { safe: true });
  t.deepEqual(parseLlamaGuard('unsafe\nS1,S10'), { safe: false, categories: ['S1', 'S10'] });
  t.deepEqual(parseLlamaGuard('unsafe'), { safe: false, categories: [] });
  t.throws(() => parseLlamaGuard('safe\nbut also unsafe'));
  t.throws(() => parseLlamaGuard('unsafe\nviolence'));
  t.throws(() => parseLlamaGuard(''));
  t.deepEqual(parseJsonVerdict('{"verdict":"allow"}'), { verdict: 'allow' });
  t.deepEqual(parseJsonVerdict('Here: {"verdict":"deny"}'), { verdict: 'deny' });
  t.throws(() => parseJsonVerdict('{"verdict":"maybe"}'));
  t.throws(() => parseJsonVerdict('allow'));
});
