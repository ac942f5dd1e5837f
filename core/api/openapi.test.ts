import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { Validator } from '@seriousme/openapi-schema-validator';
import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startGateway } from '../../test/harness.js';
import { adminOpenApi } from '../admin/openapi.js';
import { GatewayError } from '../errors.js';
import { validateChatRequest } from './chat-schema.js';
import { validateCompletionRequest } from './completions-schema.js';
import { validateEmbeddingRequest } from './embeddings-schema.js';
import { validateRerankRequest } from './rerank-schema.js';
import { validateImageGenerateRequest } from './images-generate-schema.js';
import { audioTranscriptions, imageEdits, imageVariations } from './multipart-operations.js';
import { gatewayOpenApi } from '../openapi.js';
import { v1RequestSchemas } from './openapi.js';
import { validateSpeechRequest } from './speech-schema.js';
import { validateCountRequest, validateMessagesRequest } from './protocols/messages/schema.js';
import { validateGenerateContent } from './protocols/gemini/schema.js';

type Body = Record<string, unknown>;
type Case = [label: string, body: Body, valid: boolean];

const ajv = new Ajv2020({ strict: true, strictTypes: false, strictRequired: false, allErrors: true });
ajv.addKeyword('components');
ajv.addSchema({ $id: 'https://gateway.test/openapi.json', components: gatewayOpenApi.components });
const schemaOf = (name: string) => ajv.getSchema(`https://gateway.test/openapi.json#/components/schemas/${name}`)!;

/** True when the hand-written validator accepts `body`; a refusal must be the gateway's 400. */
function validatorAccepts(check: (body: Body) => unknown, body: Body): boolean {
  try {
    check(structuredClone(body));
    return true;
  } catch (error) {
    if (!(error instanceof GatewayError) || error.status !== 400) throw error;
    return false;
  }
}

/** Runs every case through the validator and the document's schema: both must give the expected answer. */
function agree(title: string, schema: string, check: (body: Body) => unknown, cases: Case[]): void {
  test(`${title}: the OpenAPI schema and the validator agree on every case`, (t) => {
    const validate = schemaOf(schema);
    for (const [label, body, valid] of cases) {
      t.is(validatorAccepts(check, body), valid, `validator: ${label}`);
      t.is(validate(body), valid, `schema ${schema}: ${label} ${JSON.stringify(validate.errors ?? [])}`);
    }
  });
}

const chat = (extra: Body = {}): Body => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], ...extra });
const parts = (...content: Body[]): Body => chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }, ...content] }] });
const tool = (name = 'lookup') => ({ type: 'function', function: { name, parameters: { type: 'object' } } });
const many = <T>(count: number, item: (index: number) => T): T[] => Array.from({ length: count }, (_, index) => item(index));
// 1000 characters of four UTF-16 units' worth each: characters are counted as a person counts them.
const emoji = (count: number) => '😀'.repeat(count);

agree('chat completions', 'ChatCompletionRequest', (body) => validateChatRequest(body, false), [
  ['the smallest request', chat(), true],
  ['unknown fields are kept', chat({ provider_extra: { a: 1 } }), true],
  ['n 1 and 128', chat({ n: 128 }), true],
  ['n 0', chat({ n: 0 }), false],
  ['n 129', chat({ n: 129 }), false],
  ['n 1.5', chat({ n: 1.5 }), false],
  ['n null', chat({ n: null }), true],
  ['temperature 0', chat({ temperature: 0 }), true],
  ['temperature 2', chat({ temperature: 2 }), true],
  ['temperature 2.1', chat({ temperature: 2.1 }), false],
  ['temperature -0.1', chat({ temperature: -0.1 }), false],
  ['temperature as a string', chat({ temperature: '1' }), false],
  ['top_p 1', chat({ top_p: 1 }), true],
  ['top_p 1.01', chat({ top_p: 1.01 }), false],
  ['penalties -2 and 2', chat({ frequency_penalty: -2, presence_penalty: 2 }), true],
  ['presence_penalty 2.5', chat({ presence_penalty: 2.5 }), false],
  ['frequency_penalty -2.1', chat({ frequency_penalty: -2.1 }), false],
  ['logit_bias -100 and 100', chat({ logit_bias: { '50256': -100, '1': 100 } }), true],
  ['logit_bias 101', chat({ logit_bias: { '1': 101 } }), false],
  ['logit_bias -101', chat({ logit_bias: { '1': -101 } }), false],
  ['logit_bias not an integer', chat({ logit_bias: { '1': 1.5 } }), false],
  ['logit_bias key not a token id', chat({ logit_bias: { abc: 1 } }), false],
  ['stop a string', chat({ stop: 'END' }), true],
  ['stop 4 strings', chat({ stop: ['a', 'b', 'c', 'd'] }), true],
  ['stop 5 strings', chat({ stop: ['a', 'b', 'c', 'd', 'e'] }), false],
  ['stop empty array', chat({ stop: [] }), false],
  ['stop holding a number', chat({ stop: [1] }), false],
  ['128 tools', chat({ tools: many(128, (index) => tool(`tool_${index}`)) }), true],
  ['129 tools', chat({ tools: many(129, (index) => tool(`tool_${index}`)) }), false],
  ['a tool of another type', chat({ tools: [{ type: 'retrieval', function: { name: 'x' } }] }), false],
  ['a tool name with a space', chat({ tools: [tool('look up')] }), false],
  ['a tool name of 65 characters', chat({ tools: [tool('a'.repeat(65))] }), false],
  ["tool_choice 'required' with tools", chat({ tools: [tool()], tool_choice: 'required' }), true],
  ["tool_choice 'required' without tools", chat({ tool_choice: 'required' }), false],
  ['tool_choice a function', chat({ tools: [tool()], tool_choice: { type: 'function', function: { name: 'lookup' } } }), true],
  ['tool_choice an unknown word', chat({ tool_choice: 'any' }), false],
  ['top_logprobs 20 with logprobs', chat({ logprobs: true, top_logprobs: 20 }), true],
  ['top_logprobs 21', chat({ logprobs: true, top_logprobs: 21 }), false],
  ['top_logprobs without logprobs', chat({ top_logprobs: 2 }), false],
  ['max_tokens 1', chat({ max_tokens: 1 }), true],
  ['max_tokens 0', chat({ max_tokens: 0 }), false],
  ['max_completion_tokens 0', chat({ max_completion_tokens: 0 }), false],
  ['seed at the 64-bit bound', chat({ seed: 2 ** 63 }), true],
  ['seed past the 64-bit bound', chat({ seed: 2 ** 64 }), false],
  ['stream with stream_options', chat({ stream: true, stream_options: { include_usage: true } }), true],
  ['stream_options without stream', chat({ stream_options: { include_usage: true } }), false],
  ['stream as a string', chat({ stream: 'yes' }), false],
  ['parallel_tool_calls null', chat({ parallel_tool_calls: null }), false],
  ['user a number', chat({ user: 5 }), false],
  ['response_format json_schema', chat({ response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } } }), true],
  ['response_format json_schema without json_schema', chat({ response_format: { type: 'json_schema' } }), false],
  ['response_format of an unknown type', chat({ response_format: { type: 'xml' } }), false],
  ['thinking (not strict)', chat({ thinking: { type: 'enabled', budget_tokens: 1024 } }), true],
  ['thinking with budget 0', chat({ thinking: { type: 'enabled', budget_tokens: 0 } }), false],
  ['functions empty', chat({ functions: [] }), false],
  ['functions and function_call', chat({ functions: [{ name: 'f' }], function_call: { name: 'f' } }), true],
  ['a file part with file_data', parts({ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0x', filename: 'a.pdf' } }), true],
  ['a file part with file_id', parts({ type: 'file', file: { file_id: 'file-1' } }), true],
  ['a file part with neither', parts({ type: 'file', file: { filename: 'a.pdf' } }), false],
  ['a file part with raw base64', parts({ type: 'file', file: { file_data: 'JVBERi0x' } }), false],
  ['a file part with an empty file_id', parts({ type: 'file', file: { file_id: '' } }), false],
  ['a file part without file', parts({ type: 'file' }), false],
  ['input_audio wav', parts({ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }), true],
  ['input_audio flac', parts({ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'flac' } }), false],
  ['input_audio without data', parts({ type: 'input_audio', input_audio: { format: 'mp3' } }), false],
  ['input_audio data not base64', parts({ type: 'input_audio', input_audio: { data: 'not base64!', format: 'mp3' } }), false],
  ['a file part in a system message', { model: 'm', messages: [{ role: 'system', content: [{ type: 'file', file: { file_id: 'f' } }] }] }, false],
  ['no model', { messages: [{ role: 'user', content: 'Hi' }] }, false],
  ['an empty model', chat({ model: '' }), false],
  ['no messages', { model: 'm' }, false],
  ['no message', chat({ messages: [] }), false],
  ['a message without role', chat({ messages: [{ content: 'Hi' }] }), false],
  ['a message of an unknown role', chat({ messages: [{ role: 'robot', content: 'Hi' }] }), false],
  ['developer and system messages', chat({ messages: [{ role: 'developer', content: 'Be brief' }, { role: 'system', content: [{ type: 'text', text: 'x' }] }] }), true],
  ['a system message with an image', chat({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] }), false],
  ['a user message with text and an image', chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What?' }, { type: 'image_url', image_url: { url: 'data:x', detail: 'low' } }] }] }), true],
  ['an image without url', chat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }), false],
  ['an image of an unknown detail', chat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x', detail: 'max' } }] }] }), false],
  ['an empty content array', chat({ messages: [{ role: 'user', content: [] }] }), false],
  ['a user message without content', chat({ messages: [{ role: 'user' }] }), false],
  ['a text part without text', chat({ messages: [{ role: 'user', content: [{ type: 'text' }] }] }), false],
  [
    'an assistant message with only tool_calls, then the tool',
    chat({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'result' },
      ],
    }),
    true,
  ],
  ['an assistant message with neither content nor calls', chat({ messages: [{ role: 'assistant', content: null }] }), false],
  ['a tool call without arguments', chat({ messages: [{ role: 'assistant', tool_calls: [{ id: 'c1', function: { name: 'f' } }] }] }), false],
  ['a tool message without tool_call_id', chat({ messages: [{ role: 'tool', content: 'x' }] }), false],
  ['a function message with null content', chat({ messages: [{ role: 'function', name: 'f', content: null }] }), true],
  ['a function message without name', chat({ messages: [{ role: 'function', content: 'x' }] }), false],
]);

const completion = (extra: Body = {}): Body => ({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this', ...extra });
agree('completions', 'CompletionRequest', validateCompletionRequest, [
  ['a string prompt', completion(), true],
  ['no prompt', { model: 'm' }, true],
  ['a null prompt', completion({ prompt: null }), true],
  ['an array of strings', completion({ prompt: ['a', ''] }), true],
  ['token ids', completion({ prompt: [1, 2, 3] }), true],
  ['arrays of token ids', completion({ prompt: [[1], [2, 3]] }), true],
  ['an empty array', completion({ prompt: [] }), false],
  ['a mixed array', completion({ prompt: [1, 'a'] }), false],
  ['a negative token id', completion({ prompt: [-1] }), false],
  ['an empty token array', completion({ prompt: [[]] }), false],
  ['a number prompt', completion({ prompt: 5 }), false],
  ['n 128', completion({ n: 128 }), true],
  ['n 129', completion({ n: 129 }), false],
  ['best_of 20', completion({ best_of: 20 }), true],
  ['best_of 21', completion({ best_of: 21 }), false],
  ['best_of with stream', completion({ best_of: 2, stream: true }), false],
  ['logprobs 5', completion({ logprobs: 5 }), true],
  ['logprobs 6', completion({ logprobs: 6 }), false],
  ['max_tokens 0', completion({ max_tokens: 0 }), true],
  ['max_tokens -1', completion({ max_tokens: -1 }), false],
  ['suffix null', completion({ suffix: null }), true],
  ['echo null', completion({ echo: null }), true],
  ['temperature 2.5', completion({ temperature: 2.5 }), false],
  ['top_p -0.1', completion({ top_p: -0.1 }), false],
  ['penalty 3', completion({ frequency_penalty: 3 }), false],
  ['logit_bias 200', completion({ logit_bias: { '1': 200 } }), false],
  ['stop 5 strings', completion({ stop: ['a', 'b', 'c', 'd', 'e'] }), false],
  ['stream_options without stream', completion({ stream_options: { include_usage: true } }), false],
  ['no model', { prompt: 'x' }, false],
]);

test('completions: best_of not greater than n is refused by the validator, and the schema says so in words', (t) => {
  t.false(validatorAccepts(validateCompletionRequest, completion({ n: 3, best_of: 2 })));
  t.regex(String(v1RequestSchemas.CompletionRequest.description), /`best_of` must be greater than `n`/);
});

const embedding = (input: unknown, extra: Body = {}): Body => ({ model: 'text-embedding-3-small', input, ...extra });
agree('embeddings', 'EmbeddingRequest', validateEmbeddingRequest, [
  ['a string', embedding('hello'), true],
  ['2048 strings', embedding(many(2048, () => 'x')), true],
  ['2049 strings', embedding(many(2049, () => 'x')), false],
  ['5000 token ids (one input)', embedding(many(5000, (index) => index)), true],
  ['2048 token arrays', embedding(many(2048, () => [1])), true],
  ['2049 token arrays', embedding(many(2049, () => [1])), false],
  ['an empty string', embedding(''), false],
  ['an empty string in an array', embedding(['a', '']), false],
  ['an empty array', embedding([]), false],
  ['an empty token array', embedding([[]]), false],
  ['a null input', embedding(null), false],
  ['no input', { model: 'm' }, false],
  ['dimensions 1', embedding('x', { dimensions: 1 }), true],
  ['dimensions 0', embedding('x', { dimensions: 0 }), false],
  ['encoding_format base64', embedding('x', { encoding_format: 'base64' }), true],
  ['encoding_format null', embedding('x', { encoding_format: null }), false],
  ['encoding_format hex', embedding('x', { encoding_format: 'hex' }), false],
  ['user null', embedding('x', { user: null }), false],
]);

const image = (extra: Body = {}): Body => ({ prompt: 'A lighthouse', ...extra });
agree('image generations', 'ImageGenerateRequest', validateImageGenerateRequest, [
  ['a prompt alone (dall-e-2)', image(), true],
  ['a null model', image({ model: null }), true],
  ['an empty model', image({ model: '' }), false],
  ['no prompt', {}, false],
  ['an empty prompt', image({ prompt: '' }), false],
  ['dall-e-2, 1000 characters', image({ prompt: 'a'.repeat(1000) }), true],
  ['dall-e-2, 1000 emoji (2000 UTF-16 units)', image({ prompt: emoji(1000) }), true],
  ['dall-e-2, 1001 characters', image({ prompt: 'a'.repeat(1001) }), false],
  ['dall-e-3, 4000 characters', image({ model: 'dall-e-3', prompt: 'a'.repeat(4000) }), true],
  ['dall-e-3, 4001 characters', image({ model: 'dall-e-3', prompt: 'a'.repeat(4001) }), false],
  ['n 10', image({ n: 10 }), true],
  ['n 11', image({ n: 11 }), false],
  ['n 0', image({ n: 0 }), false],
  ['dall-e-3 n 1', image({ model: 'dall-e-3', n: 1 }), true],
  ['dall-e-3 n 2', image({ model: 'dall-e-3', n: 2 }), false],
  ['dall-e-3 hd, vivid, wide', image({ model: 'dall-e-3', quality: 'hd', style: 'vivid', size: '1792x1024' }), true],
  ['dall-e-3 256x256', image({ model: 'dall-e-3', size: '256x256' }), false],
  ['dall-e-3 style sepia', image({ model: 'dall-e-3', style: 'sepia' }), false],
  ['dall-e-2 hd', image({ quality: 'hd' }), false],
  ['dall-e-2 standard and 256x256', image({ quality: 'standard', size: '256x256' }), true],
  ['dall-e-2 style', image({ style: 'vivid' }), false],
  ['dall-e-2 1792x1024', image({ size: '1792x1024' }), false],
  ['another model: its own sizes and long prompts', image({ model: 'gpt-image-1', prompt: 'a'.repeat(5000), size: 'auto', quality: 'high' }), true],
  ['another model: quality a number', image({ model: 'gpt-image-1', quality: 5 }), false],
  ['response_format null', image({ response_format: null }), true],
  ['response_format png', image({ response_format: 'png' }), false],
]);

const speech = (extra: Body = {}): Body => ({ model: 'tts-1', input: 'Hello', voice: 'alloy', ...extra });
agree('speech', 'SpeechRequest', validateSpeechRequest, [
  ['the smallest request', speech(), true],
  ['speed 0.25 and wav', speech({ speed: 0.25, response_format: 'wav' }), true],
  ['speed 4', speech({ speed: 4 }), true],
  ['speed 0.2', speech({ speed: 0.2 }), false],
  ['speed 4.1', speech({ speed: 4.1 }), false],
  ['speed null', speech({ speed: null }), false],
  ['4096 characters', speech({ input: 'a'.repeat(4096) }), true],
  ['4096 emoji', speech({ input: emoji(4096) }), true],
  ['4097 characters', speech({ input: 'a'.repeat(4097) }), false],
  ['an empty input', speech({ input: '' }), false],
  ['no voice', { model: 'tts-1', input: 'x' }, false],
  ['an empty voice', speech({ voice: '' }), false],
  ['no model', { input: 'x', voice: 'alloy' }, false],
  ['response_format ogg', speech({ response_format: 'ogg' }), false],
  ['response_format null', speech({ response_format: null }), false],
]);

const messages = (extra: Body = {}): Body => ({ model: 'claude-opus-4-7', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }], ...extra });
const user = (...content: unknown[]): Body => messages({ messages: [{ role: 'user', content }] });
const toolSpec = { name: 'get_weather', input_schema: { type: 'object' } };

agree('messages', 'MessagesRequest', validateMessagesRequest, [
  ['the smallest request', messages(), true],
  ['unknown fields are kept', messages({ output_config: { effort: 'high' }, context_management: { edits: [] }, container: 'c1' }), true],
  ['no max_tokens', { model: 'm', messages: [{ role: 'user', content: 'Hi' }] }, false],
  ['max_tokens 0', messages({ max_tokens: 0 }), false],
  ['max_tokens 1.5', messages({ max_tokens: 1.5 }), false],
  ['no model', { max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }, false],
  ['empty messages', messages({ messages: [] }), false],
  ['a system entry inside messages', messages({ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] }), true],
  ['a tool role', messages({ messages: [{ role: 'tool', content: 'x' }] }), false],
  ['content a number', messages({ messages: [{ role: 'user', content: 1 }] }), false],
  ['system as blocks with cache_control', messages({ system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }] }), true],
  ['system a number', messages({ system: 3 }), false],
  ['a text block without text', user({ type: 'text' }), false],
  ['a base64 PNG', user({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } }), true],
  ['an image URL', user({ type: 'image', source: { type: 'url', url: 'https://x/a.png' } }), true],
  ['a BMP', user({ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'AA==' } }), false],
  ['empty image data', user({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } }), false],
  ['an image source of another type', user({ type: 'image', source: { type: 'text', data: 'x' } }), false],
  ['a PDF', user({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'AA==' }, title: 'a.pdf' }), true],
  ['a plain-text document', user({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }), true],
  ['an HTML document', user({ type: 'document', source: { type: 'base64', media_type: 'text/html', data: 'AA==' } }), false],
  ['a tool result with blocks', user({ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'ok' }], is_error: false }), true],
  ['a tool result without its id', user({ type: 'tool_result', content: 'ok' }), false],
  ['is_error a string', user({ type: 'tool_result', tool_use_id: 't1', is_error: 'yes' }), false],
  ['an unknown block type is kept', user({ type: 'search_result', source: 'https://x', title: 't', content: [] }), true],
  ['a client tool', messages({ tools: [toolSpec] }), true],
  ['a client tool without input_schema', messages({ tools: [{ name: 'get_weather' }] }), false],
  ['a tool name with a space', messages({ tools: [{ name: 'get weather', input_schema: { type: 'object' } }] }), false],
  ['a server tool', messages({ tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] }), true],
  ['tool_choice any', messages({ tools: [toolSpec], tool_choice: { type: 'any', disable_parallel_tool_use: true } }), true],
  ['tool_choice tool without a name', messages({ tools: [toolSpec], tool_choice: { type: 'tool' } }), false],
  ['tool_choice required', messages({ tool_choice: { type: 'required' } }), false],
  ['thinking enabled with 1024', messages({ thinking: { type: 'enabled', budget_tokens: 1024 } }), true],
  ['thinking enabled with 1023', messages({ thinking: { type: 'enabled', budget_tokens: 1023 } }), false],
  ['thinking enabled without a budget', messages({ thinking: { type: 'enabled' } }), false],
  ['thinking adaptive', messages({ thinking: { type: 'adaptive' } }), true],
  ['thinking disabled', messages({ thinking: { type: 'disabled' } }), true],
  ['thinking deep', messages({ thinking: { type: 'deep' } }), false],
  ['temperature 1', messages({ temperature: 1 }), true],
  ['temperature 1.1', messages({ temperature: 1.1 }), false],
  ['top_p -0.1', messages({ top_p: -0.1 }), false],
  ['top_k 0', messages({ top_k: 0 }), true],
  ['top_k 2.5', messages({ top_k: 2.5 }), false],
  ['stop_sequences', messages({ stop_sequences: ['###', 'END'] }), true],
  ['stop_sequences a string', messages({ stop_sequences: 'END' }), false],
  ['an empty stop sequence', messages({ stop_sequences: [''] }), false],
  ['stream true', messages({ stream: true }), true],
  ['stream a string', messages({ stream: 'true' }), false],
  ['metadata.user_id', messages({ metadata: { user_id: 'u1' } }), true],
  ['metadata.user_id null', messages({ metadata: { user_id: null } }), true],
  ['metadata.user_id a number', messages({ metadata: { user_id: 1 } }), false],
  ['output_config a string', messages({ output_config: 'json' }), false],
]);

const gemini = (extra: Body = {}): Body => ({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], ...extra });
agree('gemini generateContent', 'GeminiGenerateContentRequest', (body) => validateGenerateContent(body, 'm'), [
  ['the smallest request', gemini(), true],
  ['unknown fields are kept', gemini({ labels: { team: 'a' }, safetySettings: [] }), true],
  ['a system instruction as a string or a content', gemini({ systemInstruction: { parts: [{ text: 'x' }] } }), true],
  ['no contents', {}, false],
  ['empty contents', { contents: [] }, false],
  ['a content without parts', { contents: [{ role: 'user' }] }, false],
  ['a part that is not an object', { contents: [{ parts: ['Hi'] }] }, false],
  ['temperature 2', gemini({ generationConfig: { temperature: 2 } }), true],
  ['temperature 2.5', gemini({ generationConfig: { temperature: 2.5 } }), false],
  ['topK 0', gemini({ generationConfig: { topK: 0 } }), false],
  ['candidateCount 9', gemini({ generationConfig: { candidateCount: 9 } }), false],
  ['six stop sequences', gemini({ generationConfig: { stopSequences: ['a', 'b', 'c', 'd', 'e', 'f'] } }), false],
  ['maxOutputTokens 0', gemini({ generationConfig: { maxOutputTokens: 0 } }), false],
  ['tools not an array', gemini({ tools: {} }), false],
]);

agree('messages count_tokens', 'MessagesCountTokensRequest', validateCountRequest, [
  ['model and messages', { model: 'm', messages: [{ role: 'user', content: 'Hi' }] }, true],
  ['with tools and system', { model: 'm', system: 'x', tools: [toolSpec], messages: [{ role: 'user', content: 'Hi' }] }, true],
  ['no messages', { model: 'm' }, false],
  ['no model', { messages: [{ role: 'user', content: 'Hi' }] }, false],
]);

/** A PNG's signature and IHDR chunk: all the gateway reads of an upload. */
function png(width: number, height: number, alpha = true): Buffer {
  const header = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(header);
  header.writeUInt32BE(13, 8);
  header.write('IHDR', 12, 'latin1');
  header.writeUInt32BE(width, 16);
  header.writeUInt32BE(height, 20);
  header[24] = 8;
  header[25] = alpha ? 6 : 2;
  return header;
}

/** A multipart request as the parse step reads it, with the form's files and fields. */
async function multipartRequest(fields: Record<string, string>, files: Record<string, Buffer>): Promise<IncomingMessage> {
  const form = new FormData();
  for (const [field, bytes] of Object.entries(files)) form.append(field, new Blob([new Uint8Array(bytes)], { type: 'image/png' }), `${field}.png`);
  for (const [field, value] of Object.entries(fields)) form.append(field, value);
  const encoded = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  const body = Buffer.from(await encoded.arrayBuffer());
  const request = Readable.from([body]) as unknown as IncomingMessage;
  request.headers = { 'content-type': encoded.headers.get('content-type') ?? '', 'content-length': String(body.length) };
  return request;
}

type FormCase = [label: string, fields: Record<string, string>, valid: boolean];

/** The form's text fields through the operation's parse and the schema (files stand for themselves in the schema). */
function agreeForm(title: string, schema: string, handler: typeof imageEdits, files: Record<string, Buffer>, cases: FormCase[]): void {
  test(`${title}: the OpenAPI schema and the validator agree on every form`, async (t) => {
    const validate = schemaOf(schema);
    for (const [label, fields, valid] of cases) {
      let accepted: boolean;
      try {
        const parsed = await handler.parse(await multipartRequest(fields, files), { bodyLimitBytes: 25 * 1024 * 1024, strict: true });
        await parsed.cleanup?.();
        accepted = true;
      } catch (error) {
        if (!(error instanceof GatewayError) || error.status !== 400) throw error;
        accepted = false;
      }
      t.is(accepted, valid, `validator: ${label}`);
      // Form fields are text: a number field is described by its number.
      const asSchemaSees: Body = Object.fromEntries(Object.keys(files).map((field) => [field, 'binary']));
      for (const [field, value] of Object.entries(fields)) asSchemaSees[field] = ['n', 'temperature'].includes(field) && value !== '' && !Number.isNaN(Number(value)) ? Number(value) : value;
      t.is(validate(asSchemaSees), valid, `schema ${schema}: ${label} ${JSON.stringify(validate.errors ?? [])}`);
    }
  });
}

agreeForm('image edits', 'ImageEditRequest', imageEdits, { image: png(64, 64) }, [
  ['a prompt', { prompt: 'Add a pool' }, true],
  ['1000 characters, n 10, 512x512, b64_json', { prompt: 'a'.repeat(1000), n: '10', size: '512x512', response_format: 'b64_json', model: 'dall-e-2' }, true],
  ['no prompt', {}, false],
  ['1001 characters', { prompt: 'a'.repeat(1001) }, false],
  ['n 0', { prompt: 'x', n: '0' }, false],
  ['n 11', { prompt: 'x', n: '11' }, false],
  ['n 1.5', { prompt: 'x', n: '1.5' }, false],
  ['dall-e-3', { prompt: 'x', model: 'dall-e-3' }, false],
  ['size 1792x1024', { prompt: 'x', size: '1792x1024' }, false],
  ['response_format png', { prompt: 'x', response_format: 'png' }, false],
]);

agreeForm('image variations', 'ImageVariationRequest', imageVariations, { image: png(32, 32, false) }, [
  ['the image alone', {}, true],
  ['n 10 and 1024x1024', { n: '10', size: '1024x1024' }, true],
  ['n 11', { n: '11' }, false],
  ['model gpt-image-1', { model: 'gpt-image-1' }, false],
]);

agreeForm('audio transcriptions', 'AudioRequest', audioTranscriptions, { file: Buffer.from('RIFF audio') }, [
  ['a model', { model: 'whisper-1' }, true],
  ['verbose_json at temperature 1', { model: 'whisper-1', response_format: 'verbose_json', temperature: '1' }, true],
  ['no model', {}, false],
  ['temperature 1.5', { model: 'whisper-1', temperature: '1.5' }, false],
  ['response_format mp3', { model: 'whisper-1', response_format: 'mp3' }, false],
]);

test('the document is valid OpenAPI 3.1 by an OpenAPI validator, which does refuse a broken one', async (t) => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(gatewayOpenApi));
  t.deepEqual(result, { valid: true });
  t.is(validator.version, '3.1');

  const broken = structuredClone(gatewayOpenApi) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  broken.paths['/v1/embeddings'].post.parameters = [{ name: 'x-header-without-in' }];
  t.false((await new Validator().validate(broken)).valid);
});

const rerankBody = (extra: Body = {}): Body => ({ model: 'rerank-v3.5', query: 'capital?', documents: ['a', { text: 'b', id: 2 }], ...extra });
agree('rerank', 'RerankRequest', validateRerankRequest, [
  ['strings and objects with text', rerankBody(), true],
  ['top_n and return_documents', rerankBody({ top_n: 1, return_documents: true }), true],
  ['10000 documents', rerankBody({ documents: many(10_000, () => 'x') }), true],
  ['10001 documents', rerankBody({ documents: many(10_001, () => 'x') }), false],
  ['no documents', rerankBody({ documents: [] }), false],
  ['a number document', rerankBody({ documents: [1] }), false],
  ['an object without text', rerankBody({ documents: [{ title: 'x' }] }), false],
  ['an empty query', rerankBody({ query: '' }), false],
  ['no query', { model: 'm', documents: ['a'] }, false],
  ['top_n 0', rerankBody({ top_n: 0 }), false],
  ['top_n 1.5', rerankBody({ top_n: 1.5 }), false],
  ['return_documents "yes"', rerankBody({ return_documents: 'yes' }), false],
  ['no model', { query: 'q', documents: ['a'] }, false],
]);

test('every $ref resolves and every /v1 operation and the pass-through are described', (t) => {
  const text = JSON.stringify(gatewayOpenApi);
  for (const [, pointer] of text.matchAll(/"\$ref":"#\/([^"]+)"/g)) {
    let node: unknown = gatewayOpenApi;
    for (const step of pointer.split('/')) node = (node as Record<string, unknown> | undefined)?.[step];
    t.not(node, undefined, pointer);
  }
  const operations = Object.entries(gatewayOpenApi.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
  for (const expected of [
    'POST /v1/chat/completions',
    'GET /v1/realtime',
    'POST /v1/responses',
    'GET /v1/responses/{response_id}',
    'DELETE /v1/responses/{response_id}',
    'GET /v1/responses/{response_id}/input_items',
    'POST /v1/completions',
    'POST /v1/embeddings',
    'POST /v1/rerank',
    'POST /v1/images/generations',
    'POST /v1/images/edits',
    'POST /v1/images/variations',
    'POST /v1/audio/speech',
    'POST /v1/audio/transcriptions',
    'POST /v1/audio/translations',
    'GET /v1/models',
    'POST /v1/messages',
    'POST /v1/messages/count_tokens',
    'POST /v1beta/models/{model}:generateContent',
    'POST /v1beta/models/{model}:streamGenerateContent',
    'POST /v1beta/models/{model}:countTokens',
    'POST /v1beta/models/{model}:embedContent',
    'POST /v1beta/models/{model}:batchEmbedContents',
    'POST /v1/models/{model}:generateContent',
    'GET /v1beta/models',
    'GET /v1/{path}',
    'POST /v1/{path}',
    'PUT /v1/{path}',
    'DELETE /v1/{path}',
  ]) {
    t.true(operations.includes(expected), expected);
  }
  const chat = gatewayOpenApi.paths['/v1/chat/completions'].post as { parameters: Array<{ $ref: string }>; responses: Record<string, unknown> };
  const headers = chat.parameters.map((parameter) => (gatewayOpenApi.components.parameters[parameter.$ref.split('/').pop()!] as { name: string }).name);
  for (const header of ['x-gateway-provider', 'Authorization', 'x-gateway-custom-host', 'x-gateway-forward-headers', 'x-gateway-trace-id', 'x-gateway-metadata', 'x-gateway-strict-api-compliance', 'x-gateway-request-timeout', 'x-gateway-config', 'x-gateway-cloud-a-deployment-id', 'x-gateway-cloud-b-project-id', 'x-gateway-cloud-c-region']) {
    t.true(headers.includes(header), header);
  }
  t.is((gatewayOpenApi.components.securitySchemes.gatewayKey as { name: string }).name, 'x-gateway-api-key');
  t.deepEqual(Object.keys(chat.responses), ['200', '400', '401', '403', '404', '408', '413', '429', '502', '503', '504', 'default']);
  const passthrough = gatewayOpenApi.paths['/v1/{path}'].get as { responses: Record<string, unknown> };
  t.truthy(passthrough.responses[405]);
});

test('the admin API is included as core/admin/openapi.ts describes it, under its own key', (t) => {
  for (const [path, item] of Object.entries(adminOpenApi.paths)) {
    const merged = (gatewayOpenApi.paths as Record<string, Record<string, { security?: unknown }>>)[path];
    t.deepEqual(Object.keys(merged), Object.keys(item), path);
    // Each keeps its own security (the route schema is public), else gets the admin API's.
    for (const [method, operation] of Object.entries(merged)) t.deepEqual(operation.security, (item as Record<string, { security?: unknown }>)[method].security ?? adminOpenApi.security, path);
  }
  for (const [section, entries] of Object.entries(adminOpenApi.components)) {
    for (const name of Object.keys(entries)) t.is((gatewayOpenApi.components as Record<string, Record<string, unknown>>)[section][name], (entries as Record<string, unknown>)[name], `${section}.${name}`);
  }
  for (const name of Object.keys(v1RequestSchemas)) t.false(name in adminOpenApi.components.schemas, `${name} is not an admin schema`);
});

test('GET /openapi.json serves the document without a key', async (t) => {
  const gateway = await startGateway();
  try {
    const response = await fetch(`${gateway.url}/openapi.json`);
    t.is(response.status, 200);
    t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
    t.deepEqual(await response.json(), JSON.parse(JSON.stringify(gatewayOpenApi)));
  } finally {
    await gateway.close();
  }
});
