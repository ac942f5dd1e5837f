import test from 'ava';
import { GatewayError } from '../../../core/errors.js';
import type { ChatRequest, ChatResponse, ProviderTarget } from '../../../core/spec/index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { FAKE_ACCOUNT, snowflakeFixture } from './snowflake-cortex-fake.js';
import { snowflakeCortex } from './index.js';

const plugin = (params: Parameters<typeof snowflakeCortex>[0] = {}) => snowflakeCortex(params).create(pluginDependencies());
const target = (baseUrl: string): ProviderTarget => ({ baseUrl, customHost: false, headers: {}, credentials: { apiKey: 'pat-token' }, strict: true });
const request: ChatRequest = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] };

test("the account's host: the header, else the param; underscores as hyphens; anything else is refused", (t) => {
  t.is(plugin().baseUrl({ 'x-gateway-snowflake-account': FAKE_ACCOUNT }), 'https://myorg-myaccount.snowflakecomputing.com');
  t.is(plugin({ account: 'MyOrg_My_Account' }).baseUrl({}), 'https://myorg-my-account.snowflakecomputing.com');
  t.is(plugin().baseUrl({ 'x-gateway-snowflake-account': 'xy12345.us-east-2.aws' }), 'https://xy12345.us-east-2.aws.snowflakecomputing.com');
  const missing = t.throws(() => plugin().baseUrl({}), { instanceOf: GatewayError }) as GatewayError;
  t.like(missing.body, { param: 'x-gateway-snowflake-account', code: 'missing_required_header' });
  for (const account of ['evil.example/x', 'a b', 'x@evil.example']) {
    t.throws(() => plugin().baseUrl({ 'x-gateway-snowflake-account': account }), { instanceOf: GatewayError }, account);
  }
});

test('chat goes to the Cortex Chat Completions path with the token as Bearer; the recorded answer maps', (t) => {
  const { operations, auth } = plugin();
  const chat = operations.chat!.toUpstream(request, target('https://myorg-myaccount.snowflakecomputing.com'));
  t.is(chat.url, 'https://myorg-myaccount.snowflakecomputing.com/api/v2/cortex/v1/chat/completions');
  t.deepEqual(auth(chat, target('x')), { authorization: 'Bearer pat-token' });
  const answer = operations.chat!.fromUpstream(JSON.parse(snowflakeFixture('chat-response-text.json')), request, target('x')) as ChatResponse;
  t.is(answer.choices[0].message.content, 'Hello from Cortex.');
});
