import anyTest, { type TestFn } from 'ava';
import type { ServerResponse } from 'node:http';
import type OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { bannedWords, pii } from '../../plugins/guardrails/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type MessagesFake, startMessagesFake } from '../fakes/messages-fake.js';
import { type Fake, openAIChatHandler, openAIHandler, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { makePng } from '../fakes/png.js';
import { type ResponsesFake, startResponsesFake } from '../fakes/responses-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, sdkClient, startGateway, type TestGateway } from '../harness.js';
import { anthropicClient, PDF_BASE64 } from '../messages/helpers.js';
import { browserSkipReason, openBrowser, screenshot, signIn, type BrowserSession } from './browser.js';
import { waitForLogs } from './logs-api.js';

// Real traffic through the official SDKs (openai: chat with a tool call round trip and images, a
// streamed chat, the Responses API, embeddings and an image; @anthropic-ai/sdk: the Messages API)
// against loopback fakes; then each log's detail view in Chromium: the chat view's roles, tool
// calls with their arguments, tool results, image thumbnails, Responses items and Messages blocks.

interface Context {
  gateway: TestGateway;
  fakes: { chat: Fake; responses: ResponsesFake; messages: MessagesFake };
  browser: BrowserSession & { consoleErrors: string[] };
  traces: Record<'toolCall' | 'cached' | 'roundTrip' | 'stream' | 'redacted' | 'responses' | 'responsesStream' | 'messages' | 'messagesStream' | 'translated' | 'embed' | 'image', string>;
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;
const run = Math.random().toString(36).slice(2, 8);

/** A 24×16 gradient PNG as a data URL, the image part the client sends. */
const PNG_DATA_URL = `data:image/png;base64,${makePng({ width: 24, height: 16, colourType: 2 }).toString('base64')}`;
const GENERATED_PNG = makePng({ width: 32, height: 32, colourType: 6 }).toString('base64');
const EXTERNAL_IMAGE = 'https://images.example.test/cat.png';

const sendJson = (response: ServerResponse, body: unknown): void => void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/** Chat: a tool call for the first turn, a text answer once the tool's result is there; streams, embeddings as the recorded fake; images with a real PNG. */
function chatFake(request: RecordedRequest, response: ServerResponse): void | Promise<void> {
  const path = request.url.split('?')[0];
  if (path === '/v1/images/generations') return sendJson(response, { created: 1_760_000_000, data: [{ b64_json: GENERATED_PNG, revised_prompt: 'A small gradient square' }] });
  if (path !== '/v1/chat/completions') return openAIHandler(request, response);
  const body = request.json();
  if (body.stream) return openAIChatHandler(request, response);
  const last = body.messages[body.messages.length - 1];
  const message =
    last.role === 'tool'
      ? { role: 'assistant', content: 'It is sunny in Paris, 21 °C.', refusal: null }
      : { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' } }] };
  sendJson(response, {
    id: 'chatcmpl-detail',
    object: 'chat.completion',
    created: 1_760_000_000,
    model: body.model,
    choices: [{ index: 0, message, finish_reason: last.role === 'tool' ? 'stop' : 'tool_calls', logprobs: null }],
    usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 },
  });
}

const weatherTool: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] } },
};

test.before(async (t) => {
  if (skipReason) return;
  // The browser first: when it cannot start, nothing else is left open to keep this file's process alive.
  const browser = await openBrowser();
  t.context.browser = browser;
  const chat = await startFake(chatFake);
  const responses = await startResponsesFake();
  const messages = await startMessagesFake();
  // Every request passes a policy (PII redacted on the way in, banned words checked on the way out) and the response cache.
  const gateway = await startGateway({ providers: [openai(), anthropic()], cache: { default: { mode: 'simple' } }, policies: { checked: { input: [pii({})], output: [bannedWords({ words: ['plutonium'] })] } }, defaultPolicy: 'checked' });
  const traces = {
    toolCall: `detail-tool-${run}`,
    roundTrip: `detail-round-${run}`,
    cached: `detail-cached-${run}`,
    stream: `detail-stream-${run}`,
    redacted: `detail-redacted-${run}`,
    responses: `detail-responses-${run}`,
    messages: `detail-messages-${run}`,
    responsesStream: `detail-responses-stream-${run}`,
    messagesStream: `detail-messages-stream-${run}`,
    translated: `detail-translated-${run}`,
    embed: `detail-embed-${run}`,
    image: `detail-image-${run}`,
  };
  const client = (trace: string) => sdkClient(gateway.url, chat.baseUrl, { 'x-gateway-trace-id': trace });

  // A tool call round trip: the question with two images (inline and by URL), the call, its result, the answer.
  const question: OpenAI.Chat.Completions.ChatCompletionMessageParam = {
    role: 'user',
    content: [
      { type: 'text', text: 'What is the weather in the city of this picture?' },
      { type: 'image_url', image_url: { url: PNG_DATA_URL } },
      { type: 'image_url', image_url: { url: EXTERNAL_IMAGE } },
    ],
  };
  const system: OpenAI.Chat.Completions.ChatCompletionMessageParam = { role: 'system', content: 'You answer about the weather.' };
  const first = await client(traces.toolCall).chat.completions.create({ model: 'gpt-4o-mini', messages: [system, question], tools: [weatherTool] });
  const call = first.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
  if (call.function.name !== 'get_weather') throw new Error('the fake should have called get_weather');
  // The same question again: answered from the cache.
  await client(traces.cached).chat.completions.create({ model: 'gpt-4o-mini', messages: [system, question], tools: [weatherTool] });
  await client(traces.roundTrip).chat.completions.create({
    model: 'gpt-4o-mini',
    tools: [weatherTool],
    messages: [system, question, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '{"temperature":21,"sky":"sunny"}' }],
  });

  // A streamed chat: the SDK reads the recorded stream.
  const stream = await client(traces.stream).chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Say hello' }] });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? '';
  if (streamed !== 'Hello! How can I help?') throw new Error(`unexpected stream text ${streamed}`);

  await client(traces.redacted).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Write to ana@example.com' }] });
  await client(traces.embed).embeddings.create({ model: 'text-embedding-3-small', input: ['first sentence', 'second sentence'] });
  await client(traces.image).images.generate({ model: 'gpt-image-1', prompt: 'A gradient square', size: '1024x1024' });

  // The Responses API: a function call's output sent back, answered with reasoning and text.
  responses.answer({ kind: 'text', text: 'Sunny, 21 °C.', reasoning: 'The tool says sunny: report it.' });
  const responsesClient = sdkClient(gateway.url, responses.baseUrl, { 'x-gateway-trace-id': traces.responses });
  await responsesClient.responses.create({
    model: 'gpt-5-mini',
    instructions: 'Answer briefly.',
    store: false,
    input: [
      { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }, { type: 'input_image', image_url: PNG_DATA_URL, detail: 'low' }] },
      { type: 'function_call', call_id: 'call_resp_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_resp_1', output: '{"sky":"sunny"}' },
    ],
    tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, strict: true }],
  });

  // The Messages API: image and document blocks, a tool_use and its tool_result; the answer thinks, speaks and calls a tool.
  messages.answer({
    content: [
      { type: 'thinking', thinking: 'Paris is sunny per the tool; maybe check Lyon too.', signature: 'sig-detail' },
      { type: 'text', text: 'Sunny in Paris. Checking Lyon.' },
      { type: 'tool_use', id: 'toolu_lyon', name: 'get_weather', input: { city: 'Lyon' } },
    ],
    stopReason: 'tool_use',
  });
  const pngBase64 = PNG_DATA_URL.slice('data:image/png;base64,'.length);
  await anthropicClient(gateway.url, { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': messages.baseUrl, 'x-gateway-trace-id': traces.messages }).messages.create({
    model: 'claude-opus-4-7',
    max_tokens: 200,
    system: 'You answer about the weather.',
    tools: [{ name: 'get_weather', description: 'The weather in a city.', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather where this photo was taken?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pngBase64 } },
          { type: 'document', title: 'Trip plan', source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 } },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_paris', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_paris', content: 'sunny, 21 °C' }] },
    ],
  });

  // Both again, streamed: the log keeps a summary of each stream (core/logs/record.ts), which the view reads.
  responses.answer({ kind: 'call', name: 'get_weather', arguments: '{"city":"Lyon"}', callId: 'call_stream_1' });
  const responsesStream = await sdkClient(gateway.url, responses.baseUrl, { 'x-gateway-trace-id': traces.responsesStream }).responses.create({ model: 'gpt-5-mini', input: 'Weather in Lyon?', store: false, stream: true });
  for await (const _event of responsesStream) continue;
  messages.answer({ content: [{ type: 'text', text: 'Checking Nice.' }, { type: 'tool_use', id: 'toolu_nice', name: 'get_weather', input: { city: 'Nice' } }], stopReason: 'tool_use' });
  const messagesStream = await anthropicClient(gateway.url, { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': messages.baseUrl, 'x-gateway-trace-id': traces.messagesStream }).messages.create({
    model: 'claude-opus-4-7',
    max_tokens: 100,
    stream: true,
    messages: [{ role: 'user', content: 'Weather in Nice?' }],
  });
  for await (const _event of messagesStream) continue;

  // A Messages request to a provider that speaks chat: `top_k` has no chat equivalent and is dropped.
  await anthropicClient(gateway.url, { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': chat.baseUrl, 'x-gateway-trace-id': traces.translated }, PROVIDER_KEY).messages.create({
    model: 'gpt-4o-mini',
    max_tokens: 100,
    // The SDK's types of this version leave `top_k` out; the API takes it.
    ...({ top_k: 5 } as object),
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
  });

  await waitForLogs(gateway, Object.values(traces));
  t.context = { gateway, fakes: { chat, responses, messages }, browser, traces };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await Promise.all(Object.values(t.context.fakes ?? {}).map((fake) => fake.close()));
});

/** Opens the detail view of the request with this trace id, from the logs list. */
async function openDetail(page: Page, gatewayUrl: string, trace: string): Promise<void> {
  await page.goto(`${gatewayUrl}/dashboard#/logs?range=all&trace_id=${encodeURIComponent(trace)}`);
  await page.locator(`table.logs tbody tr[data-trace-id="${trace}"] a.open-detail`).click();
  await page.getByRole('tab', { name: 'Chat view' }).waitFor();
}

/** Scrolls the "Request and answer" heading to the top of the window, for screenshots. */
const showChat = (page: Page) => page.evaluate(() => (globalThis as any).document.getElementById('d-bodies').scrollIntoView());

/** The turns of a list (Request or Answer) as `[role, text]`. */
const turns = (page: Page, list: 'Request' | 'Answer') =>
  page.getByRole('list', { name: list, exact: true }).locator(':scope > li.turn').evaluateAll((items) =>
    items.map((item) => [item.getAttribute('data-role'), ((item.querySelector('.parts') as any)?.innerText ?? '').replace(/\s+/g, ' ').trim()]),
  );

const toolCalls = (page: Page, list: 'Request' | 'Answer') =>
  page.getByRole('list', { name: list, exact: true }).locator('.tool-call').evaluateAll((calls) =>
    calls.map((call) => ({ name: call.querySelector('.tool-name')?.textContent, id: call.querySelector('.call-id')?.textContent ?? null, arguments: JSON.parse(call.querySelector('pre.args')?.textContent ?? 'null') })),
  );

it('chat: the view shows roles, the image thumbnail, the external image as a link, and the answer’s tool call', async (t) => {
  const { page } = t.context.browser;
  await signIn(page, t.context.gateway.url);
  await openDetail(page, t.context.gateway.url, t.context.traces.toolCall);
  const chatTab = page.getByRole('tab', { name: 'Chat view' });
  t.is(await chatTab.getAttribute('aria-selected'), 'true');
  t.is(await page.locator('.chat-view').getAttribute('data-shape'), 'chat');
  t.deepEqual(await turns(page, 'Request'), [
    ['system', 'You answer about the weather.'],
    ['user', `What is the weather in the city of this picture? image: ${EXTERNAL_IMAGE}`],
  ]);
  // The inline image is a thumbnail of the bytes sent; the external one is a link, never loaded.
  const thumbnail = page.getByRole('list', { name: 'Request', exact: true }).locator('img.thumb');
  t.is(await thumbnail.getAttribute('src'), PNG_DATA_URL);
  t.deepEqual(await thumbnail.evaluate((image: any) => [image.complete, image.naturalWidth, image.naturalHeight]), [true, 24, 16]);
  t.is(await page.locator('img[src^="http"]').count(), 0);
  t.is(await page.locator(`a[href="${EXTERNAL_IMAGE}"]`).getAttribute('rel'), 'noopener noreferrer nofollow');
  t.deepEqual(await toolCalls(page, 'Answer'), [{ name: 'get_weather', id: 'call_weather_1', arguments: { city: 'Paris', unit: 'c' } }]);
  t.regex(await page.locator('.tools-offered').innerText(), /Tools offered: get_weather/);
  t.regex(await page.getByRole('list', { name: 'Answer', exact: true }).locator('.finish').innerText(), /tool_calls/);
});

it('the cache: a miss, then a hit of the same question with what it saved (the first answer’s cost)', async (t) => {
  const { page } = t.context.browser;
  await openDetail(page, t.context.gateway.url, t.context.traces.toolCall);
  t.is(await page.locator('#cache dd[data-cache-status]').getAttribute('data-cache-status'), 'MISS');
  t.regex(await page.locator('#cache').innerText(), /Cache\s+MISS looked up, not found: the provider answered and the answer was stored/);
  t.is(await page.locator('#cache .cache-saved').count(), 0);
  const cost = await page.locator('section[aria-labelledby="d-usage"] dd').last().innerText();
  t.regex(cost, /^\$0\.0000\d+$/, 'significant digits, not $0.000000');

  await openDetail(page, t.context.gateway.url, t.context.traces.cached);
  t.is(await page.locator('#cache .cache-badge').innerText(), 'HIT');
  t.regex(await page.locator('#cache').innerText(), /served from the cache: an exact match of a stored answer/);
  t.is(await page.locator('#cache .cache-saved').innerText(), cost);
  // The answer is the stored one: the same tool call.
  t.deepEqual(await toolCalls(page, 'Answer'), [{ name: 'get_weather', id: 'call_weather_1', arguments: { city: 'Paris', unit: 'c' } }]);
  await page.setViewportSize({ width: 1280, height: 900 });
  await screenshot(page, 'dashboard-log-detail');
  await page.setViewportSize({ width: 1366, height: 900 });
});

it('chat: the round trip shows the call, the tool result named after it, and the final answer', async (t) => {
  const { page } = t.context.browser;
  await openDetail(page, t.context.gateway.url, t.context.traces.roundTrip);
  const request = await turns(page, 'Request');
  t.deepEqual(request.map(([role]) => role), ['system', 'user', 'assistant', 'tool']);
  t.deepEqual(await toolCalls(page, 'Request'), [{ name: 'get_weather', id: 'call_weather_1', arguments: { city: 'Paris', unit: 'c' } }]);
  const result = page.getByRole('list', { name: 'Request', exact: true }).locator('.tool-result');
  t.is(await result.locator('.tool-name').innerText(), 'get_weather');
  t.is(await result.locator('.call-id').innerText(), 'call_weather_1');
  t.deepEqual(JSON.parse(await result.locator('pre').innerText()), { temperature: 21, sky: 'sunny' });
  t.deepEqual(await turns(page, 'Answer'), [['assistant', 'It is sunny in Paris, 21 °C.']]);
  await page.setViewportSize({ width: 1280, height: 900 });
  await showChat(page);
  await screenshot(page, 'dashboard-log-chat');

  // The raw JSON is one tab away, by keyboard: arrow to it, the panel swaps.
  await page.getByRole('tab', { name: 'Chat view' }).focus();
  await page.keyboard.press('ArrowRight');
  const raw = page.getByRole('tab', { name: 'Raw JSON' });
  t.is(await raw.getAttribute('aria-selected'), 'true');
  t.true(await raw.evaluate((element) => element === (globalThis as any).document.activeElement));
  t.true(await page.locator('#panel-chat').isHidden());
  const requestBody = await page.locator('#request-body pre').innerText();
  t.true(requestBody.includes('"tool_call_id": "call_weather_1"'));
  t.false((await page.content()).includes(PROVIDER_KEY));
  t.false((await page.content()).includes(ACCOUNT_KEY));
  await page.keyboard.press('ArrowLeft');
  t.true(await page.locator('#panel-chat').isVisible());
});

it('chat: a streamed answer shows as the assistant’s text, marked streamed; the guardrail verdicts are named', async (t) => {
  const { page } = t.context.browser;
  await openDetail(page, t.context.gateway.url, t.context.traces.stream);
  t.deepEqual(await turns(page, 'Request'), [['user', 'Say hello']]);
  const answer = page.getByRole('list', { name: 'Answer', exact: true }).locator('li.turn');
  t.is(await answer.count(), 1);
  t.is(await answer.getAttribute('data-role'), 'assistant');
  t.is(await answer.locator('.parts').innerText(), 'Hello! How can I help?');
  t.is(await answer.locator('.turn-head .chip').innerText(), 'streamed');
  const verdicts = await page.locator('#guardrails table tbody tr').evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('th, td')].slice(0, 4).map((cell) => (cell.textContent ?? '').trim())));
  t.deepEqual(verdicts.map((cells) => cells.slice(0, 3)), [
    ['pii', 'input', 'allow'],
    ['banned-words', 'output', 'allow'],
  ]);
  t.is(verdicts[0][3], '—');
  // The output guardrail judged the stream in windows as it went by; the count depends on how its chunks were cut.
  t.regex(verdicts[1][3], /^(?:—|\d+ window checks)$/);

  // A redacting verdict says what it changed, by kind; the log keeps the request as sent on, redacted.
  await openDetail(page, t.context.gateway.url, t.context.traces.redacted);
  const [[role, said]] = await turns(page, 'Request');
  t.is(role, 'user');
  t.true(said.startsWith('Write to ') && !said.includes('ana@example.com'), said);
  t.false((await page.content()).includes('ana@example.com'));
  t.deepEqual(await page.locator('#guardrails table tbody tr').first().locator('th, td').evaluateAll((cells) => cells.slice(0, 4).map((cell) => (cell.textContent ?? '').trim())), ['pii', 'input', 'transform', 'email × 1']);
});

it('a translated request lists the fields the provider could not take', async (t) => {
  const { page } = t.context.browser;
  await openDetail(page, t.context.gateway.url, t.context.traces.translated);
  t.is(await page.locator('.chat-view').getAttribute('data-shape'), 'messages');
  t.deepEqual(await page.locator('#dropped-fields li').allInnerTexts(), ['top_k']);
  t.deepEqual(await turns(page, 'Request'), [['user', 'Weather in Paris?']]);
  t.deepEqual(await toolCalls(page, 'Answer'), [{ name: 'get_weather', id: 'call_weather_1', arguments: { city: 'Paris', unit: 'c' } }]);
});

it('Responses: input items (instructions, message with an image, function_call, function_call_output) and output items (reasoning, message)', async (t) => {
  const { page } = t.context.browser;
  await openDetail(page, t.context.gateway.url, t.context.traces.responses);
  t.is(await page.locator('.chat-view').getAttribute('data-shape'), 'responses');
  const request = await turns(page, 'Request');
  t.deepEqual(request, [
    ['instructions', 'Answer briefly.'],
    ['user', 'Weather in Paris?'],
    ['assistant', 'Tool call get_weather call_resp_1 { "city": "Paris" }'],
    ['tool', 'Tool result get_weather call_resp_1 { "sky": "sunny" }'],
  ]);
  const items = await page.getByRole('list', { name: 'Request', exact: true }).locator('li.turn').evaluateAll((list) => list.map((item) => item.getAttribute('data-item')));
  t.deepEqual(items, [null, 'message', 'function_call', 'function_call_output']);
  t.is(await page.getByRole('list', { name: 'Request', exact: true }).locator('img.thumb').getAttribute('src'), PNG_DATA_URL);
  const answer = page.getByRole('list', { name: 'Answer', exact: true }).locator('li.turn');
  t.deepEqual(await answer.evaluateAll((list) => list.map((item) => item.getAttribute('data-item'))), ['reasoning', 'message']);
  t.is(await answer.nth(0).locator('details.reasoning').innerText(), 'Reasoning\nThe tool says sunny: report it.');
  t.is(await answer.nth(1).locator('.parts').innerText(), 'Sunny, 21 °C.');
  await showChat(page);
  await screenshot(page, 'dashboard-log-responses');
});

it('Messages: system, image and document blocks, tool_use and tool_result; the answer’s thinking, text and tool_use', async (t) => {
  const { page } = t.context.browser;
  await openDetail(page, t.context.gateway.url, t.context.traces.messages);
  t.is(await page.locator('.chat-view').getAttribute('data-shape'), 'messages');
  const request = page.getByRole('list', { name: 'Request', exact: true });
  t.deepEqual((await turns(page, 'Request')).map(([role]) => role), ['system', 'user', 'assistant', 'user']);
  t.is(await request.locator('img.thumb').getAttribute('src'), PNG_DATA_URL);
  t.is(await request.locator('.chip[data-kind="document"]').innerText(), 'document Trip plan · application/pdf');
  t.deepEqual(await toolCalls(page, 'Request'), [{ name: 'get_weather', id: 'toolu_paris', arguments: { city: 'Paris' } }]);
  t.is(await request.locator('.tool-result .tool-name').innerText(), 'get_weather');
  t.is(await request.locator('.tool-result pre').innerText(), 'sunny, 21 °C');
  const answer = page.getByRole('list', { name: 'Answer', exact: true });
  t.is(await answer.locator('details.reasoning div').innerText(), 'Paris is sunny per the tool; maybe check Lyon too.');
  t.is(await answer.locator('.part-text').nth(1).innerText(), 'Sunny in Paris. Checking Lyon.');
  t.deepEqual(await toolCalls(page, 'Answer'), [{ name: 'get_weather', id: 'toolu_lyon', arguments: { city: 'Lyon' } }]);
  t.regex(await answer.locator('.finish').innerText(), /tool_use/);
  await showChat(page);
  await screenshot(page, 'dashboard-log-messages');
});

it('streamed Responses and Messages answers show their items and blocks, from the log’s stream summary', async (t) => {
  const { page } = t.context.browser;
  await openDetail(page, t.context.gateway.url, t.context.traces.responsesStream);
  t.is(await page.locator('.chat-view').getAttribute('data-shape'), 'responses');
  t.deepEqual(await turns(page, 'Request'), [['user', 'Weather in Lyon?']]);
  const responsesAnswer = page.getByRole('list', { name: 'Answer', exact: true }).locator('li.turn');
  t.deepEqual(await responsesAnswer.evaluateAll((list) => list.map((item) => item.getAttribute('data-item'))), ['function_call']);
  t.is(await responsesAnswer.locator('.turn-head .chip').innerText(), 'streamed');
  t.deepEqual(await toolCalls(page, 'Answer'), [{ name: 'get_weather', id: 'call_stream_1', arguments: { city: 'Lyon' } }]);

  await openDetail(page, t.context.gateway.url, t.context.traces.messagesStream);
  t.is(await page.locator('.chat-view').getAttribute('data-shape'), 'messages');
  const messagesAnswer = page.getByRole('list', { name: 'Answer', exact: true });
  t.is(await messagesAnswer.locator('.part-text').innerText(), 'Checking Nice.');
  t.deepEqual(await toolCalls(page, 'Answer'), [{ name: 'get_weather', id: 'toolu_nice', arguments: { city: 'Nice' } }]);
  t.regex(await messagesAnswer.locator('.finish').innerText(), /tool_use/);
  t.is(await messagesAnswer.locator('.turn-head .chip').innerText(), 'streamed');
});

it('embeddings show the inputs and the vectors’ count and dimensions; an image generation its prompt and a thumbnail', async (t) => {
  const { page } = t.context.browser;
  await openDetail(page, t.context.gateway.url, t.context.traces.embed);
  t.deepEqual(await turns(page, 'Request'), [['input 1', 'first sentence'], ['input 2', 'second sentence']]);
  const vectors = page.locator('p.vectors');
  const dimensions = await vectors.getAttribute('data-dimensions');
  t.is(await vectors.getAttribute('data-count'), '2');
  t.regex(dimensions ?? '', /^\d+$/);
  t.is(await vectors.innerText(), `2 vectors of ${dimensions} dimensions (the values are not shown)`);

  await openDetail(page, t.context.gateway.url, t.context.traces.image);
  t.deepEqual(await turns(page, 'Request'), [['prompt', 'A gradient square settings size: 1024x1024']]);
  const generated = page.getByRole('list', { name: 'Answer', exact: true }).locator('img.thumb');
  t.is(await generated.getAttribute('src'), `data:image/png;base64,${GENERATED_PNG}`);
  t.deepEqual(await generated.evaluate((image: any) => [image.complete, image.naturalWidth]), [true, 32]);
  t.regex(await page.getByRole('list', { name: 'Answer', exact: true }).innerText(), /Revised prompt: A small gradient square/);
  t.deepEqual(t.context.browser.consoleErrors, []);
});

it('at 800 px the detail view has no horizontal page scroll', async (t) => {
  const { page } = t.context.browser;
  await page.setViewportSize({ width: 800, height: 900 });
  await openDetail(page, t.context.gateway.url, t.context.traces.roundTrip);
  const overflow = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).innerWidth);
  t.true(overflow <= 0, `the page is ${overflow} px wider than the window`);
  await showChat(page);
  await screenshot(page, 'dashboard-log-chat-800');
  await page.setViewportSize({ width: 1366, height: 900 });
});
