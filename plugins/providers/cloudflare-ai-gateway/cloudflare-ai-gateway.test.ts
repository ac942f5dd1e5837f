import test from 'ava';
import { GatewayError } from '../../../core/errors.js';
import type { ChatRequest, ChatResponse, ProviderTarget } from '../../../core/spec/index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { aiGatewayFixture, FAKE_ACCOUNT, FAKE_GATEWAY } from './cloudflare-ai-gateway-fake.js';
import { mapAIGatewayError } from './cloudflare-ai-gateway-error.js';
import { cloudflareAIGateway } from './index.js';

const plugin = (params: Parameters<typeof cloudflareAIGateway>[0] = {}) => cloudflareAIGateway(params).create(pluginDependencies());
const headers = { 'x-gateway-cloudflare-account-id': FAKE_ACCOUNT, 'x-gateway-cloudflare-gateway-id': FAKE_GATEWAY };
const target = (requestHeaders: Record<string, string> = headers): ProviderTarget => ({
  baseUrl: 'https://gateway.ai.cloudflare.com/v1',
  customHost: false,
  headers: requestHeaders,
  credentials: { apiKey: 'sk-upstream' },
  strict: true,
});
const request: ChatRequest = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'What is Cloudflare?' }] };

test('chat goes to the account and gateway compat path; the provider key as Bearer', (t) => {
  const upstream = plugin().operations.chat!.toUpstream(request, target());
  t.is(upstream.url, `https://gateway.ai.cloudflare.com/v1/${FAKE_ACCOUNT}/${FAKE_GATEWAY}/compat/chat/completions`);
  t.is(JSON.parse(String(upstream.body)).model, 'openai/gpt-4o-mini');
  t.deepEqual(plugin().auth(upstream, target()), { authorization: 'Bearer sk-upstream' });
  t.is(plugin({ accountId: 'acct', gatewayId: 'gw' }).operations.chat!.toUpstream(request, target({})).url, 'https://gateway.ai.cloudflare.com/v1/acct/gw/compat/chat/completions');
});

test('a missing or malformed gateway id is refused before anything is sent', (t) => {
  const chat = plugin().operations.chat!;
  t.like((t.throws(() => chat.toUpstream(request, target({ 'x-gateway-cloudflare-account-id': FAKE_ACCOUNT })), { instanceOf: GatewayError }) as GatewayError).body, {
    param: 'x-gateway-cloudflare-gateway-id',
    code: 'missing_required_header',
  });
  t.like((t.throws(() => chat.toUpstream(request, target({ ...headers, 'x-gateway-cloudflare-gateway-id': '../x' })), { instanceOf: GatewayError }) as GatewayError).body, { code: 'invalid_header' });
  t.like((t.throws(() => chat.toUpstream(request, target({ 'x-gateway-cloudflare-gateway-id': FAKE_GATEWAY })), { instanceOf: GatewayError }) as GatewayError).body, {
    param: 'x-gateway-cloudflare-account-id',
  });
});

test("the recorded answer maps; the gateway's own error envelope is read", (t) => {
  const answer = plugin().operations.chat!.fromUpstream(JSON.parse(aiGatewayFixture('chat-response.json')), request, target()) as ChatResponse;
  t.is(answer.choices[0].message.content, 'Cloudflare is a connectivity cloud.');
  t.deepEqual(mapAIGatewayError({ status: 401, headers: {}, body: Buffer.from(aiGatewayFixture('error-unauthorized.json')) }), {
    message: 'Unauthorized',
    type: 'authentication_error',
    param: null,
    code: '2009',
  });
  t.like(mapAIGatewayError({ status: 400, headers: {}, body: Buffer.from('{"error":{"message":"bad model","type":"invalid_request_error"}}') }), { message: 'bad model' });
});
