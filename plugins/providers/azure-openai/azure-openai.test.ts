import test from 'ava';
import { GatewayError } from '../../../core/errors.js';
import type { ChatRequest, ProviderTarget } from '../../../core/spec/index.js';
import { azureFixture } from './azure-openai-fake.js';
import { azureChat } from './azure-chat.js';
import { mapAzureError } from './azure-error.js';
import { azureCompletion, azureEmbed, azureImageEdit, azureImageGenerate, azureModels, azureSpeech, azureTranscription, azureTranslation } from './azure-operations.js';
import { isEntraToken } from './azure-target.js';
import { azureOpenAI } from './index.js';

const headers = {
  'x-gateway-cloud-a-resource-name': 'contoso',
  'x-gateway-cloud-a-deployment-id': 'gpt4o-prod',
  'x-gateway-cloud-a-api-version': '2024-10-21',
};
const target = (overrides: Partial<ProviderTarget> = {}): ProviderTarget => ({
  baseUrl: 'https://contoso.openai.azure.com/openai',
  customHost: false,
  headers,
  credentials: { apiKey: '0123456789abcdef0123456789abcdef' },
  strict: true,
  ...overrides,
});
const chat = azureChat('2024-10-21');
const request: ChatRequest = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] };
const json = (name: string) => JSON.parse(azureFixture(name));
const lines = (name: string) => azureFixture(name).split('\n').filter(Boolean);

test('URLs come from the resource, deployment and api-version headers', (t) => {
  const plugin = azureOpenAI().create({} as never);
  t.is(plugin.baseUrl(headers), 'https://contoso.openai.azure.com/openai');
  t.is(chat.toUpstream(request, target()).url, 'https://contoso.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
  const noVersion = target({ headers: { ...headers, 'x-gateway-cloud-a-api-version': undefined } });
  t.is(azureEmbed('2024-06-01').toUpstream({ model: 'e', input: 'x' }, noVersion).url, 'https://contoso.openai.azure.com/openai/deployments/gpt4o-prod/embeddings?api-version=2024-06-01');
  t.is(azureCompletion('v').toUpstream({ model: 'm', prompt: 'x' }, target()).url.split('?')[0].split('/').at(-1), 'completions');
  t.true(azureImageGenerate('v').toUpstream({ prompt: 'fox' }, target()).url.includes('/deployments/gpt4o-prod/images/generations?'));
  t.true(azureSpeech('v').toUpstream({ model: 'tts', input: 'hi', voice: 'alloy' }, target()).url.includes('/deployments/gpt4o-prod/audio/speech?'));
  t.is(plugin.passthroughUrl?.('/deployments/d/audio/transcriptions', target()), 'https://contoso.openai.azure.com/openai/deployments/d/audio/transcriptions?api-version=2024-10-21');
  t.is(plugin.passthroughUrl?.('/models?api-version=2024-02-01', target()), 'https://contoso.openai.azure.com/openai/models?api-version=2024-02-01');
});

test('missing or malformed cloud-a headers are 400s naming the header', (t) => {
  const plugin = azureOpenAI().create({} as never);
  t.is(t.throws(() => plugin.baseUrl({}), { instanceOf: GatewayError })?.body.param, 'x-gateway-cloud-a-resource-name');
  t.is(t.throws(() => plugin.baseUrl({ 'x-gateway-cloud-a-resource-name': 'evil.com/' }), { instanceOf: GatewayError })?.body.param, 'x-gateway-cloud-a-resource-name');
  const noDeployment = target({ headers: { 'x-gateway-cloud-a-resource-name': 'contoso' } });
  t.is(t.throws(() => chat.toUpstream(request, noDeployment), { instanceOf: GatewayError })?.body.param, 'x-gateway-cloud-a-deployment-id');
  const badVersion = target({ headers: { ...headers, 'x-gateway-cloud-a-api-version': 'latest&x=1' } });
  t.is(t.throws(() => chat.toUpstream(request, badVersion), { instanceOf: GatewayError })?.body.param, 'x-gateway-cloud-a-api-version');
});

test('the body goes up as received; streams ask for usage', (t) => {
  const original = Buffer.from(JSON.stringify(request));
  t.is(chat.toUpstream(request, target(), original).body, original);
  t.deepEqual(JSON.parse(String(chat.toUpstream({ ...request, stream: true }, target()).body)).stream_options, { include_usage: true });
  t.deepEqual(JSON.parse(String(azureCompletion('v').toUpstream({ model: 'm', prompt: 'x', stream: true }, target()).body)).stream_options, { include_usage: true });
});

test('auth: api-key for keys, Bearer for Entra ID tokens (JWTs)', (t) => {
  const plugin = azureOpenAI().create({} as never);
  const upstream = { method: 'POST' as const, url: 'x', headers: {} };
  t.deepEqual(plugin.auth(upstream, target()), { 'api-key': '0123456789abcdef0123456789abcdef' });
  const jwt = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2NvZ25pdGl2ZXNlcnZpY2VzLmF6dXJlLmNvbSJ9.c2lnbmF0dXJl';
  t.deepEqual(plugin.auth(upstream, target({ credentials: { apiKey: jwt } })), { authorization: `Bearer ${jwt}` });
  t.false(isEntraToken('eyJnot-a-jwt'));
  t.throws(() => plugin.auth(upstream, target({ credentials: {} })), { instanceOf: GatewayError });
});

test('content filter: Azure finish reason kept; filtered results override a stop', (t) => {
  const filtered = chat.fromUpstream(json('chat-completion-filtered.json'), request, target());
  t.is(filtered.choices[0].finish_reason, 'content_filter');
  t.is(filtered.choices[0].message.content, null);
  const partial = chat.fromUpstream(json('chat-completion-partial-filter.json'), request, target({ headers: { ...headers, 'x-gateway-cloud-a-model-name': 'gpt-4o' } }));
  t.is(partial.choices[0].finish_reason, 'content_filter');
  t.is(partial.model, 'gpt-4o');
});

test('tool calls pass through unchanged', (t) => {
  const response = chat.fromUpstream(json('chat-completion-tool-calls.json'), request, target());
  t.is(response.choices[0].finish_reason, 'tool_calls');
  t.deepEqual(response.choices[0].message.tool_calls, [{ id: 'call_az1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
  t.is(response.usage?.total_tokens, 75);
});

test('stream: the prompt-filter chunk is dropped; text, finish, usage and done follow', (t) => {
  const mapper = chat.stream!.createMapper(request, target());
  const steps = lines('chat-stream.txt').map((data) => mapper.map({ data }));
  t.deepEqual(steps[0], { chunks: [] });
  const chunks = steps.flatMap((step) => step.chunks ?? []);
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Hello from Azure!');
  t.is(chunks.at(-2)?.choices[0].finish_reason, 'stop');
  t.deepEqual(chunks.at(-1)?.usage, { completion_tokens: 4, prompt_tokens: 11, total_tokens: 15 });
  t.true(steps.at(-1)?.done);
});

test('stream: content filter and tool calls', (t) => {
  const filteredMapper = chat.stream!.createMapper(request, target());
  const filtered = lines('chat-stream-filtered.txt').flatMap((data) => filteredMapper.map({ data }).chunks ?? []);
  t.is(filtered.at(-2)?.choices[0].finish_reason, 'content_filter');
  const toolMapper = chat.stream!.createMapper(request, target());
  const tools = lines('chat-stream-tool-calls.txt').flatMap((data) => toolMapper.map({ data }).chunks ?? []);
  const args = tools.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []).map((call) => call.function?.arguments ?? '').join('');
  t.is(args, '{"city":"Paris"}');
  t.is(tools.at(-2)?.choices[0].finish_reason, 'tool_calls');
});

test('stream: error events and malformed data end the stream; unknown shapes are ignored', (t) => {
  const mapper = chat.stream!.createMapper(request, target());
  t.like(mapper.map({ data: '{"error":{"message":"Server overloaded","type":"server_error"}}' }).error, { message: 'Server overloaded' });
  t.like(mapper.map({ data: '{"choi' }).error, { code: 'malformed_stream' });
  t.deepEqual(mapper.map({ data: '{"type":"ping"}' }), {});
});

test('completions, embeddings and images map from their fixtures', (t) => {
  t.is(azureCompletion('v').fromUpstream(json('completion.json'), { model: 'm' }, target()).choices[0].text, ' a gateway.');
  const mapper = azureCompletion('v').stream!.createMapper({ model: 'm', stream: true }, target());
  const steps = lines('completion-stream.txt').map((data) => mapper.map({ data }));
  t.deepEqual(steps[0], {});
  const chunks = steps.flatMap((step) => step.chunks ?? []);
  t.is(chunks.map((chunk) => chunk.choices[0]?.text ?? '').join(''), ' a gateway.');
  t.is(chunks.at(-1)?.usage?.total_tokens, 8);
  t.true(steps.at(-1)?.done);
  t.deepEqual(azureEmbed('v').fromUpstream(json('embeddings.json'), { model: 'e', input: 'x' }, target()).data[0].embedding, [0.0023, -0.0094, 0.0158]);
  t.is(azureImageGenerate('v').fromUpstream(json('image-generation.json'), { prompt: 'fox' }, target()).data[0].revised_prompt, 'A watercolor fox in a snowy forest.');
  t.throws(() => azureEmbed('v').fromUpstream({ nope: 1 }, { model: 'e', input: 'x' }, target()), { instanceOf: TypeError });
});

test('errors: content filter 400, front-door 401, deployment not found', (t) => {
  const reply = (status: number, name: string) => ({ status, headers: {}, body: Buffer.from(azureFixture(name)) });
  t.like(mapAzureError(reply(400, 'error-content-filter.json')), { type: 'invalid_request_error', code: 'content_filter', param: 'prompt' });
  const unauthorized = mapAzureError(reply(401, 'error-401.json'));
  t.is(unauthorized.type, 'authentication_error');
  t.true(unauthorized.message.startsWith('Unauthorized. Access token is missing'));
  t.deepEqual(mapAzureError(reply(404, 'error-deployment-not-found.json')), {
    message: 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
    type: 'not_found_error',
    param: null,
    code: 'DeploymentNotFound',
  });
});

test('multipart operations post the re-encoded form to the deployment; models map to the OpenAI list', (t) => {
  const form = { fields: { model: 'whisper' }, repeated: {}, files: [] };
  const transcription = azureTranscription('v').toUpstream(form, target());
  t.is(transcription.url, 'https://contoso.openai.azure.com/openai/deployments/gpt4o-prod/audio/transcriptions?api-version=2024-10-21');
  t.regex(transcription.headers['content-type'], /^multipart\/form-data; boundary=/);
  t.is(azureTranscription('v').fromUpstream, undefined);
  t.true(azureTranslation('v').toUpstream(form, target()).url.includes('/audio/translations?'));
  t.true(azureImageEdit('v').toUpstream(form, target()).url.includes('/images/edits?'));
  const models = azureModels('2024-10-21');
  t.is(models.toUpstream(target()).url, 'https://contoso.openai.azure.com/openai/models?api-version=2024-10-21');
  t.deepEqual(models.fromUpstream(json('models.json'), target()), {
    object: 'list',
    data: [
      { id: 'gpt-4o-2024-08-06', object: 'model', created: 1723248000, owned_by: 'azure-openai' },
      { id: 'text-embedding-3-small', object: 'model', created: 1705953600, owned_by: 'azure-openai' },
    ],
  });
});
