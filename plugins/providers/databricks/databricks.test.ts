import test from 'ava';
import { GatewayError } from '../../../core/errors.js';
import type { ChatRequest, ChatResponse, ProviderTarget, UpstreamReply } from '../../../core/spec/index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { mapDatabricksError } from './databricks-error.js';
import { databricksFixture, FAKE_WORKSPACE } from './databricks-fake.js';
import { databricks } from './index.js';

const plugin = (params: Parameters<typeof databricks>[0] = {}) => databricks(params).create(pluginDependencies());
const target = (baseUrl: string): ProviderTarget => ({ baseUrl, customHost: false, headers: {}, credentials: { apiKey: 'dapi-token' }, strict: true });
const request: ChatRequest = { model: 'databricks-meta-llama-3-3-70b-instruct', messages: [{ role: 'user', content: 'What is a mixture of experts model?' }] };
const reply = (status: number, name: string): UpstreamReply => ({ status, headers: {}, body: Buffer.from(databricksFixture(name)) });

test('the workspace host comes from the header, else the host param; only Databricks hosts are taken', (t) => {
  t.is(plugin().baseUrl({ 'x-gateway-databricks-host': FAKE_WORKSPACE }), `https://${FAKE_WORKSPACE}`);
  t.is(plugin({ host: 'https://adb-123.4.azuredatabricks.net/' }).baseUrl({}), 'https://adb-123.4.azuredatabricks.net');
  t.is(plugin().baseUrl({ 'x-gateway-databricks-host': 'x.gcp.databricks.com' }), 'https://x.gcp.databricks.com');
  const missing = t.throws(() => plugin().baseUrl({}), { instanceOf: GatewayError }) as GatewayError;
  t.like(missing.body, { param: 'x-gateway-databricks-host', code: 'missing_required_header' });
  for (const host of ['evil.example.com', 'cloud.databricks.com.evil.example', 'a.cloud.databricks.com/x', 'a.cloud.databricks.com:8080']) {
    const bad = t.throws(() => plugin().baseUrl({ 'x-gateway-databricks-host': host }), { instanceOf: GatewayError }) as GatewayError;
    t.like(bad.body, { code: 'invalid_header' }, host);
  }
});

test('chat and embeddings go to the serving-endpoints paths with the endpoint name as model; the token as Bearer', (t) => {
  const { operations, auth } = plugin();
  const chat = operations.chat!.toUpstream(request, target(`https://${FAKE_WORKSPACE}`));
  t.is(chat.url, `https://${FAKE_WORKSPACE}/serving-endpoints/chat/completions`);
  t.is(JSON.parse(String(chat.body)).model, 'databricks-meta-llama-3-3-70b-instruct');
  t.is(operations.embed!.toUpstream({ model: 'databricks-gte-large-en', input: 'x' }, target(`https://${FAKE_WORKSPACE}`)).url, `https://${FAKE_WORKSPACE}/serving-endpoints/embeddings`);
  t.deepEqual(auth(chat, target('x')), { authorization: 'Bearer dapi-token' });
});

test('the recorded answer maps (a null id included)', (t) => {
  const answer = plugin().operations.chat!.fromUpstream(JSON.parse(databricksFixture('chat-response-text.json')), request, target('x')) as ChatResponse;
  t.is(answer.choices[0].message.content, 'A mixture of experts routes each token to a few expert networks.');
  t.is(answer.usage?.total_tokens, 21);
});

test("Databricks' error_code and message are kept; other shapes are read too", (t) => {
  t.deepEqual(mapDatabricksError(reply(404, 'error-404.json')), { message: "Endpoint with name 'my-endpoint' does not exist.", type: 'not_found_error', param: null, code: 'RESOURCE_DOES_NOT_EXIST' });
  t.like(mapDatabricksError(reply(429, 'error-429.json')), { type: 'rate_limit_error', code: 'REQUEST_LIMIT_EXCEEDED' });
  t.like(mapDatabricksError({ status: 400, headers: {}, body: Buffer.from('{"error":{"message":"bad","type":"invalid_request_error"}}') }), { message: 'bad' });
});
