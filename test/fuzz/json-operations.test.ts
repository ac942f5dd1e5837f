import test from 'ava';
import fc from 'fast-check';
import { jsonBody, jsonContentType, jsonRequest, jsonValue, mutatedObject } from './arbitraries.js';
import { fuzzSuite } from './fuzz-setup.js';

const suite = fuzzSuite(test);

const message = fc.oneof(
  mutatedObject({ role: 'user', content: 'hi' }, ['role', 'content', 'name', 'tool_calls', 'tool_call_id', 'refusal', 'function_call']),
  mutatedObject({ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, ['tool_calls', 'content', 'role']),
  fc.record({ role: fc.constantFrom('user', 'system', 'developer'), content: fc.array(mutatedObject({ type: 'text', text: 'x' }, ['type', 'text', 'image_url', 'input_audio']), { maxLength: 3 }) }),
  fc.record({ role: fc.constant('tool'), tool_call_id: jsonValue, content: jsonValue }),
  jsonValue,
);
const tool = fc.oneof(
  mutatedObject({ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }, ['type', 'function']),
  fc.record({ type: fc.constant('function'), function: mutatedObject({ name: 'f', parameters: { type: 'object' }, strict: true }, ['name', 'parameters', 'strict', 'description']) }),
);

const CHAT_FIELDS = ['model', 'messages', 'stream', 'stream_options', 'temperature', 'top_p', 'n', 'max_tokens', 'max_completion_tokens', 'stop', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'user', 'tools', 'tool_choice', 'response_format', 'seed', 'parallel_tool_calls', 'functions', 'function_call', 'thinking', 'metadata', 'modalities'];
const chatBody = jsonBody({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, CHAT_FIELDS, fc.oneof(
  fc.record({ model: fc.constant('gpt-4o-mini'), messages: fc.array(message, { maxLength: 4 }) }, { requiredKeys: ['messages'] }).map((body) => JSON.stringify(body)),
  fc.record({ model: fc.constant('gpt-4o-mini'), messages: fc.constant([{ role: 'user', content: 'hi' }]), tools: fc.array(tool, { maxLength: 3 }), tool_choice: jsonValue }, { requiredKeys: ['messages'] }).map((body) => JSON.stringify(body)),
  fc.record({ model: fc.constant('gpt-4o-mini'), messages: fc.constant([{ role: 'user', content: 'hi' }]), stream: fc.constant(true), stream_options: jsonValue, response_format: mutatedObject({ type: 'json_schema', json_schema: { name: 's', schema: {} } }, ['type', 'json_schema']) }).map((body) => JSON.stringify(body)),
));

const COMPLETION_FIELDS = ['model', 'prompt', 'suffix', 'max_tokens', 'temperature', 'top_p', 'n', 'stream', 'stream_options', 'logprobs', 'echo', 'stop', 'presence_penalty', 'frequency_penalty', 'best_of', 'logit_bias', 'user', 'seed'];
const completionBody = jsonBody({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' }, COMPLETION_FIELDS, fc.record({
  model: fc.constant('gpt-3.5-turbo-instruct'),
  prompt: fc.oneof(jsonValue, fc.array(fc.oneof(fc.integer({ min: -5, max: 200_000 }), fc.string()), { maxLength: 5 }), fc.array(fc.array(fc.integer({ min: -2, max: 110_000 }), { maxLength: 4 }), { maxLength: 3 })),
  logit_bias: fc.dictionary(fc.string({ maxLength: 8 }), jsonValue, { maxKeys: 3 }),
}, { requiredKeys: ['prompt'] }).map((body) => JSON.stringify(body)));

const EMBEDDING_FIELDS = ['model', 'input', 'encoding_format', 'dimensions', 'user'];
const embeddingBody = jsonBody({ model: 'text-embedding-3-small', input: 'hello' }, EMBEDDING_FIELDS, fc.record({
  model: fc.constant('text-embedding-3-small'),
  input: fc.oneof(fc.array(fc.oneof(fc.string(), fc.integer({ min: -3, max: 300_000 })), { maxLength: 6 }), fc.array(fc.array(fc.integer({ min: -3, max: 300_000 }), { maxLength: 5 }), { maxLength: 3 }), fc.integer({ min: 8_000, max: 60_000 }).map((count) => ' hello'.repeat(count))),
  dimensions: jsonValue,
}, { requiredKeys: ['input'] }).map((body) => JSON.stringify(body)));

const IMAGE_FIELDS = ['model', 'prompt', 'n', 'quality', 'response_format', 'size', 'style', 'user', 'background', 'output_format', 'output_compression', 'moderation'];
const imageBody = jsonBody({ model: 'dall-e-2', prompt: 'a cat' }, IMAGE_FIELDS);

const SPEECH_FIELDS = ['model', 'input', 'voice', 'response_format', 'speed', 'instructions', 'stream_format'];
const speechBody = jsonBody({ model: 'tts-1', input: 'Hello', voice: 'alloy' }, SPEECH_FIELDS);

const OPERATIONS: ReadonlyArray<[path: string, body: fc.Arbitrary<Buffer>]> = [
  ['/v1/chat/completions', chatBody],
  ['/v1/completions', completionBody],
  ['/v1/embeddings', embeddingBody],
  ['/v1/images/generations', imageBody],
  ['/v1/audio/speech', speechBody],
];

/** A POST to one of the unified JSON operations, with a generated body and content type, sent whole or chunked. */
const operationRequest = fc.oneof(
  ...OPERATIONS.map(([path, body]) =>
    fc.record({ body, contentType: jsonContentType, strict: fc.constantFrom(undefined, 'false'), chunked: fc.boolean() }).map(({ body: bytes, contentType, strict, chunked }) => ({
      ...jsonRequest('POST', path, bytes, { 'content-type': contentType, 'x-gateway-strict-api-compliance': strict }),
      chunked,
    })),
  ),
);

/** `/v1/models` and the operations' paths with other methods, query strings and bodies. */
const otherMethodRequest = fc
  .record({
    path: fc.constantFrom('/v1/models', ...OPERATIONS.map(([path]) => path)),
    method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
    query: fc.oneof(fc.constant(''), fc.webQueryParameters().map((query) => (query ? `?${query}` : ''))),
    body: fc.option(fc.oneof(fc.constant('{}'), fc.string({ maxLength: 50 })).map((text) => Buffer.from(text)), { nil: undefined }),
  })
  .map(({ path, method, query, body }) => jsonRequest(method, `${path}${query}`, body));

suite.property('unified JSON operations answer broken bodies with an OpenAI-shaped 4xx', () => operationRequest, { runs: 650, batches: 4 });
suite.property('unified JSON paths answer other methods, queries and bodies with a 4xx', () => otherMethodRequest, { runs: 300 });
suite.property('unified JSON operations answer broken bodies sent together with an OpenAI-shaped 4xx', () => operationRequest, { runs: 800, concurrency: 16 });
