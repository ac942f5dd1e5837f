import test from 'ava';
import { GatewayError } from '../../../core/errors.js';
import type { ChatRequest, ChatResponse, ProviderTarget } from '../../../core/spec/index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { mapAzureError } from '../azure-openai/azure-error.js';
import { foundryFixture } from './azure-ai-foundry-fake.js';
import { azureAIFoundry } from './index.js';

const plugin = (params: Parameters<typeof azureAIFoundry>[0] = {}) => azureAIFoundry(params).create(pluginDependencies());
const base = 'https://contoso.services.ai.azure.com/models';
const target = (headers: Record<string, string> = {}, apiKey = 'foundry-key'): ProviderTarget => ({ baseUrl: base, customHost: false, headers, credentials: { apiKey }, strict: true });
const request: ChatRequest = { model: 'Phi-4', messages: [{ role: 'user', content: 'What is Azure AI Foundry?' }], max_completion_tokens: 50 };

test('the resource comes from the cloud-a header, else the resource param; a bad name is refused', (t) => {
  t.is(plugin().baseUrl({ 'x-gateway-cloud-a-resource-name': 'contoso' }), base);
  t.is(plugin({ resource: 'fabrikam' }).baseUrl({}), 'https://fabrikam.services.ai.azure.com/models');
  t.like((t.throws(() => plugin().baseUrl({}), { instanceOf: GatewayError }) as GatewayError).body, { code: 'missing_required_header', param: 'x-gateway-cloud-a-resource-name' });
  t.like((t.throws(() => plugin().baseUrl({ 'x-gateway-cloud-a-resource-name': 'evil.example.com/x' }), { instanceOf: GatewayError }) as GatewayError).body, { code: 'invalid_header' });
});

test('chat and embeddings carry the api-version (header, param, default); max tokens as max_tokens', (t) => {
  const chat = plugin().operations.chat!.toUpstream(request, target());
  t.is(chat.url, `${base}/chat/completions?api-version=2024-05-01-preview`);
  const body = JSON.parse(String(chat.body)) as Record<string, unknown>;
  t.is(body.model, 'Phi-4');
  t.is(body.max_tokens, 50);
  t.false('max_completion_tokens' in body);
  t.is(plugin({ apiVersion: '2025-05-01' }).operations.embed!.toUpstream({ model: 'text-embedding-3-small', input: 'x' }, target()).url, `${base}/embeddings?api-version=2025-05-01`);
  const header = target({ 'x-gateway-cloud-a-api-version': '2024-08-01-preview' });
  t.is(plugin().operations.chat!.toUpstream(request, header).url, `${base}/chat/completions?api-version=2024-08-01-preview`);
  t.throws(() => plugin().operations.chat!.toUpstream(request, target({ 'x-gateway-cloud-a-api-version': '1&x=y' })), { instanceOf: GatewayError });
});

test('fields Foundry refuses are refused before sending; n > 1 too', (t) => {
  const chat = plugin().operations.chat!;
  t.like((t.throws(() => chat.validate!({ ...request, logit_bias: { '1': 2 } }), { instanceOf: GatewayError }) as GatewayError).body, { param: 'logit_bias' });
  t.like((t.throws(() => chat.validate!({ ...request, n: 2 }), { instanceOf: GatewayError }) as GatewayError).body, { param: 'n' });
});

test('an API key goes in api-key, an Entra ID token as Bearer', (t) => {
  const upstream = plugin().operations.chat!.toUpstream(request, target());
  t.deepEqual(plugin().auth(upstream, target()), { 'api-key': 'foundry-key' });
  const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJ4In0.c2ln';
  t.deepEqual(plugin().auth(upstream, target({}, jwt)), { authorization: `Bearer ${jwt}` });
});

test('the recorded answer and error map', (t) => {
  const answer = plugin().operations.chat!.fromUpstream(JSON.parse(foundryFixture('chat-response.json')), request, target()) as ChatResponse;
  t.is(answer.choices[0].message.content, 'Azure AI Foundry serves many models behind one endpoint.');
  t.is(answer.usage?.total_tokens, 26);
  const error = mapAzureError({ status: 422, headers: {}, body: Buffer.from(foundryFixture('error-extra-parameter.json')) });
  t.like(error, { code: 'Invalid input' });
  t.regex(error.message, /logit_bias/);
});
