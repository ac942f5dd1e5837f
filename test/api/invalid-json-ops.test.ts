import test from 'ava';
import type { ProviderRegistration } from '../../core/spec/index.js';
import { mapOpenAIError } from '../../plugins/providers/openai/openai-error.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, openAIHandler, startFake } from '../fakes/openai-fake.js';
import { gatewayHeaders, startGateway, type TestGateway, traceId } from '../harness.js';

let fake: Fake;
let gateway: TestGateway;

/** A provider that offers no operation at all (pass-through only). */
const bare: ProviderRegistration = {
  manifest: { id: 'bare', kind: 'provider', specificationVersion: 'v1', version: '1.0.0', description: 'A provider with no unified operations (test).' },
  params: {},
  create: () => ({
    id: 'bare',
    name: 'Bare',
    operations: {},
    baseUrl: () => 'http://127.0.0.1:9/v1',
    auth: () => ({}),
    authHeaders: [],
    mapError: mapOpenAIError,
  }),
};

test.before(async () => {
  fake = await startFake(openAIHandler);
  gateway = await startGateway({ providers: [openai(), bare] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

async function send(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any; trace: string }> {
  const trace = traceId('invalid');
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: gatewayHeaders(fake.baseUrl, {
      'content-type': 'application/json',
      'x-test-trace': trace,
      'x-gateway-forward-headers': 'x-test-trace',
      ...headers,
    }),
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, json, trace };
}

const upstreamGot = (trace: string) => fake.requests.filter((request) => request.headers['x-test-trace'] === trace);

const COMPLETIONS = '/v1/completions';
const EMBEDDINGS = '/v1/embeddings';
const IMAGES = '/v1/images/generations';
const SPEECH = '/v1/audio/speech';

const completion = (extra: object) => ({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test', ...extra });
const embedding = (extra: object) => ({ model: 'text-embedding-ada-002', input: 'hello', ...extra });
const speech = (extra: object) => ({ model: 'tts-1', input: 'Hello', voice: 'alloy', ...extra });
const tokens = (count: number) => Array.from({ length: count }, (_, index) => index % 100_000);
/** " hello" is one cl100k token, so this is 9000 tokens in 54000 bytes. */
const overLimitText = ' hello'.repeat(9000);

const INVALID: Array<[label: string, path: string, body: object, param: string]> = [
  // text completions
  ['completion without model', COMPLETIONS, { prompt: 'x' }, 'model'],
  ['completion model not a string', COMPLETIONS, completion({ model: 42 }), 'model'],
  ['prompt an object', COMPLETIONS, completion({ prompt: { text: 'x' } }), 'prompt'],
  ['prompt an empty array', COMPLETIONS, completion({ prompt: [] }), 'prompt'],
  ['prompt mixing strings and numbers', COMPLETIONS, completion({ prompt: ['a', 1] }), 'prompt[1]'],
  ['prompt with a negative token id', COMPLETIONS, completion({ prompt: [5, -1] }), 'prompt[1]'],
  ['prompt with an empty token array', COMPLETIONS, completion({ prompt: [[1], []] }), 'prompt[1]'],
  ['best_of 21', COMPLETIONS, completion({ best_of: 21 }), 'best_of'],
  ['best_of -1', COMPLETIONS, completion({ best_of: -1 }), 'best_of'],
  ['best_of equal to n', COMPLETIONS, completion({ best_of: 2, n: 2 }), 'best_of'],
  ['best_of below n', COMPLETIONS, completion({ best_of: 1, n: 3 }), 'best_of'],
  ['best_of with stream', COMPLETIONS, completion({ best_of: 3, stream: true }), 'best_of'],
  ['logprobs 6', COMPLETIONS, completion({ logprobs: 6 }), 'logprobs'],
  ['logprobs -1', COMPLETIONS, completion({ logprobs: -1 }), 'logprobs'],
  ['n 0', COMPLETIONS, completion({ n: 0 }), 'n'],
  ['n 129', COMPLETIONS, completion({ n: 129 }), 'n'],
  ['stop of 5', COMPLETIONS, completion({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'stop'],
  ['max_tokens -1', COMPLETIONS, completion({ max_tokens: -1 }), 'max_tokens'],
  ['frequency_penalty 2.1', COMPLETIONS, completion({ frequency_penalty: 2.1 }), 'frequency_penalty'],
  ['presence_penalty -2.1', COMPLETIONS, completion({ presence_penalty: -2.1 }), 'presence_penalty'],
  ['temperature 2.1', COMPLETIONS, completion({ temperature: 2.1 }), 'temperature'],
  ['temperature -0.1', COMPLETIONS, completion({ temperature: -0.1 }), 'temperature'],
  ['top_p 1.1', COMPLETIONS, completion({ top_p: 1.1 }), 'top_p'],
  ['top_p -0.1', COMPLETIONS, completion({ top_p: -0.1 }), 'top_p'],
  ['stream_options without stream', COMPLETIONS, completion({ stream_options: { include_usage: true } }), 'stream_options'],
  ['echo not a boolean', COMPLETIONS, completion({ echo: 'yes' }), 'echo'],
  ['seed not an integer', COMPLETIONS, completion({ seed: 1.5 }), 'seed'],
  ['logit_bias 101', COMPLETIONS, completion({ logit_bias: { '50256': 101 } }), 'logit_bias.50256'],
  ['suffix not a string', COMPLETIONS, completion({ suffix: 3 }), 'suffix'],
  ['completion user not a string', COMPLETIONS, completion({ user: 5 }), 'user'],
  // embeddings
  ['embedding without model', EMBEDDINGS, { input: 'x' }, 'model'],
  ['embedding without input', EMBEDDINGS, { model: 'text-embedding-3-small' }, 'input'],
  ['empty string input', EMBEDDINGS, embedding({ input: '' }), 'input'],
  ['empty string in an input array', EMBEDDINGS, embedding({ input: ['a', ''] }), 'input[1]'],
  ['input a number', EMBEDDINGS, embedding({ input: 42 }), 'input'],
  ['2049-entry input', EMBEDDINGS, embedding({ input: Array.from({ length: 2049 }, () => 'x') }), 'input'],
  ['2049 token arrays', EMBEDDINGS, embedding({ input: Array.from({ length: 2049 }, () => [1]) }), 'input'],
  ['ada-002 token array of 8193', EMBEDDINGS, embedding({ input: tokens(8193) }), 'input'],
  ['ada-002 string over 8192 tokens', EMBEDDINGS, embedding({ input: overLimitText }), 'input'],
  ['3-small string over 8192 tokens in an array', EMBEDDINGS, embedding({ model: 'text-embedding-3-small', input: ['ok', overLimitText] }), 'input[1]'],
  ['3-large token array of 8193 in an array', EMBEDDINGS, embedding({ model: 'text-embedding-3-large', input: [tokens(8193)] }), 'input[0]'],
  ['encoding_format binary', EMBEDDINGS, embedding({ encoding_format: 'binary' }), 'encoding_format'],
  ['dimensions 0', EMBEDDINGS, embedding({ dimensions: 0 }), 'dimensions'],
  ['dimensions 1.5', EMBEDDINGS, embedding({ dimensions: 1.5 }), 'dimensions'],
  // image generation
  ['image without prompt', IMAGES, { model: 'dall-e-3' }, 'prompt'],
  ['image empty prompt', IMAGES, { prompt: '' }, 'prompt'],
  ['prompt 1001 characters on A', IMAGES, { prompt: 'a'.repeat(1001) }, 'prompt'],
  ['prompt 1001 characters on A named', IMAGES, { model: 'dall-e-2', prompt: 'a'.repeat(1001) }, 'prompt'],
  ['prompt 4001 characters on B', IMAGES, { model: 'dall-e-3', prompt: 'a'.repeat(4001) }, 'prompt'],
  ['n 0 on A', IMAGES, { prompt: 'x', n: 0 }, 'n'],
  ['n 11 on A', IMAGES, { prompt: 'x', n: 11 }, 'n'],
  ['B with n=2', IMAGES, { model: 'dall-e-3', prompt: 'x', n: 2 }, 'n'],
  ['hd on A', IMAGES, { model: 'dall-e-2', prompt: 'x', quality: 'hd' }, 'quality'],
  ['style on A', IMAGES, { prompt: 'x', style: 'vivid' }, 'style'],
  ['B size on A', IMAGES, { prompt: 'x', size: '1792x1024' }, 'size'],
  ['A size on B', IMAGES, { model: 'dall-e-3', prompt: 'x', size: '512x512' }, 'size'],
  ['256x256 on B', IMAGES, { model: 'dall-e-3', prompt: 'x', size: '256x256' }, 'size'],
  ['unknown quality on B', IMAGES, { model: 'dall-e-3', prompt: 'x', quality: 'ultra' }, 'quality'],
  ['unknown style on B', IMAGES, { model: 'dall-e-3', prompt: 'x', style: 'bold' }, 'style'],
  ['response_format png', IMAGES, { prompt: 'x', response_format: 'png' }, 'response_format'],
  ['image user not a string', IMAGES, { prompt: 'x', user: 1 }, 'user'],
  ['other model n 11', IMAGES, { model: 'some-image-model', prompt: 'x', n: 11 }, 'n'],
  ["provider's own bound: gpt-image-1 size", IMAGES, { model: 'gpt-image-1', prompt: 'x', size: '256x256' }, 'size'],
  // speech
  ['speech without model', SPEECH, { input: 'x', voice: 'alloy' }, 'model'],
  ['speech unknown model', SPEECH, speech({ model: 'tts-2' }), 'model'],
  ['speech without input', SPEECH, { model: 'tts-1', voice: 'alloy' }, 'input'],
  ['speech empty input', SPEECH, speech({ input: '' }), 'input'],
  ['4097-character speech input', SPEECH, speech({ input: 'a'.repeat(4097) }), 'input'],
  ['speech without voice', SPEECH, { model: 'tts-1', input: 'x' }, 'voice'],
  ['wrong voice', SPEECH, speech({ voice: 'bob' }), 'voice'],
  ['speed 0.2', SPEECH, speech({ speed: 0.2 }), 'speed'],
  ['speed 4.1', SPEECH, speech({ speed: 4.1 }), 'speed'],
  ['response_format ogg', SPEECH, speech({ response_format: 'ogg' }), 'response_format'],
];

test(`the table holds at least 45 invalid requests (${INVALID.length})`, (t) => {
  t.true(INVALID.length >= 45);
});

for (const [label, path, body, param] of INVALID) {
  test(`400 ${param}: ${label}`, async (t) => {
    const { status, json, trace } = await send(path, body);
    t.is(status, 400, JSON.stringify(json).slice(0, 300));
    t.is(json.error.param, param);
    t.is(json.error.type, 'invalid_request_error');
    t.true(typeof json.error.message === 'string' && json.error.message.length > 10);
    t.is(upstreamGot(trace).length, 0, 'nothing was sent upstream');
  });
}

const VALID: Array<[label: string, path: string, body: object]> = [
  ['n 128', COMPLETIONS, completion({ n: 128 })],
  ['best_of 20 without n', COMPLETIONS, completion({ best_of: 20 })],
  ['best_of 20 over n 19', COMPLETIONS, completion({ best_of: 20, n: 19 })],
  ['best_of 0 without n', COMPLETIONS, completion({ best_of: 0 })],
  ['logprobs 0 and 5', COMPLETIONS, completion({ logprobs: 5 })],
  ['logprobs null', COMPLETIONS, completion({ logprobs: null })],
  ['stop of 4', COMPLETIONS, completion({ stop: ['a', 'b', 'c', 'd'] })],
  ['max_tokens 0', COMPLETIONS, completion({ max_tokens: 0 })],
  ['penalties at the bounds', COMPLETIONS, completion({ frequency_penalty: -2, presence_penalty: 2 })],
  ['temperature 2, top_p 0', COMPLETIONS, completion({ temperature: 2, top_p: 0 })],
  ['no prompt at all', COMPLETIONS, { model: 'gpt-3.5-turbo-instruct' }],
  ['seed at 2^53', COMPLETIONS, completion({ seed: 2 ** 53 })],
  ['2048 inputs', EMBEDDINGS, embedding({ input: Array.from({ length: 2048 }, () => 'x') })],
  ['8192 token ids', EMBEDDINGS, embedding({ input: tokens(8192) })],
  ['a model without a known token limit takes a long string', EMBEDDINGS, embedding({ model: 'my-embedder', input: overLimitText })],
  ['dimensions 1', EMBEDDINGS, embedding({ model: 'text-embedding-3-small', dimensions: 1 })],
  ['A at 1000 characters, n 10, each size', IMAGES, { prompt: 'a'.repeat(1000), n: 10, size: '512x512' }],
  ['A with standard quality', IMAGES, { model: 'dall-e-2', prompt: 'x', quality: 'standard', size: '1024x1024' }],
  ['B at 4000 characters', IMAGES, { model: 'dall-e-3', prompt: 'b'.repeat(4000), size: '1024x1792', quality: 'standard', style: 'vivid' }],
  ['other model with n 10', IMAGES, { model: 'some-image-model', prompt: 'x', n: 10, size: '640x480' }],
  ['speed 0.25', SPEECH, speech({ speed: 0.25 })],
  ['speed 4', SPEECH, speech({ speed: 4 })],
  ['4096 characters', SPEECH, speech({ input: 'z'.repeat(4096) })],
  ['4096 characters of emoji (code points, not UTF-16 units)', SPEECH, speech({ input: '👋'.repeat(4096) })],
  ['each format', SPEECH, speech({ response_format: 'flac', model: 'tts-1-hd', voice: 'fable' })],
];

for (const [label, path, body] of VALID) {
  test(`accepted: ${label}`, async (t) => {
    const { status, json, trace } = await send(path, body);
    t.is(status, 200, typeof json === 'string' ? json.slice(0, 200) : JSON.stringify(json).slice(0, 300));
    const received = upstreamGot(trace);
    t.is(received.length, 1);
    t.deepEqual(received[0].json(), body, 'the request went up exactly as sent');
  });
}

test('an operation the selected provider lacks is refused naming provider and operation, nothing sent', async (t) => {
  for (const [path, body, operation] of [
    [COMPLETIONS, completion({}), 'completion'],
    [EMBEDDINGS, embedding({}), 'embed'],
    [IMAGES, { prompt: 'x' }, 'imageGenerate'],
    [SPEECH, speech({}), 'speech'],
  ] as const) {
    const { status, json, trace } = await send(path, body, { 'x-gateway-provider': 'bare' });
    t.is(status, 400);
    t.is(json.error.param, 'x-gateway-provider');
    t.is(json.error.code, 'unsupported_operation');
    t.true(json.error.message.includes('"bare"') && json.error.message.includes(`"${operation}"`), json.error.message);
    t.is(upstreamGot(trace).length, 0);
  }
  const models = await fetch(`${gateway.url}/v1/models`, { headers: gatewayHeaders(fake.baseUrl, { 'x-gateway-provider': 'bare' }) });
  t.is(models.status, 400);
  t.regex(((await models.json()) as any).error.message, /"bare".*"models"/);
});

test('a body that is not JSON is refused on every JSON operation', async (t) => {
  for (const path of [COMPLETIONS, EMBEDDINGS, IMAGES, SPEECH]) {
    const response = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: gatewayHeaders(fake.baseUrl, { 'content-type': 'application/json' }),
      body: '{"model": ',
    });
    t.is(response.status, 400);
    t.is(((await response.json()) as any).error.code, 'invalid_json');
  }
});
