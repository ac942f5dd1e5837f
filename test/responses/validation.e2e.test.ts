import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';

/** Bad `POST /v1/responses` bodies: 400 with the offending field's path in `param`, nothing sent upstream. */

let gateway: TestGateway;
let fake: Fake;

test.before(async () => {
  fake = await startFake((_request, response) => {
    response.writeHead(500).end('must not be called');
  });
  gateway = await startGateway();
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const post = async (body: unknown) => {
  const response = await fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, authorization: `Bearer ${PROVIDER_KEY}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { error: { message: string; type: string; param: string | null; code: string | null } } };
};

const cases: Array<[string, unknown, string | null]> = [
  ['model missing', { input: 'hi' }, 'model'],
  ['model empty', { model: '', input: 'hi' }, 'model'],
  ['input missing without previous_response_id', { model: 'm' }, 'input'],
  ['input a number', { model: 'm', input: 42 }, 'input'],
  ['an item that is not an object', { model: 'm', input: ['hi'] }, 'input[0]'],
  ['a message without role', { model: 'm', input: [{ type: 'message', content: 'x' }] }, 'input[0].role'],
  ['a message with an unknown role', { model: 'm', input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
  ['an unknown content part', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_video', url: 'x' }] }] }, 'input[0].content[0].type'],
  ['input_text without text', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'input[0].content[0].text'],
  ['input_image with neither url nor file', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', detail: 'auto' }] }] }, 'input[0].content[0]'],
  ['input_image with a bad detail', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png', detail: 'huge' }] }] }, 'input[0].content[0].detail'],
  ['input_file with no data', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf' }] }] }, 'input[0].content[0]'],
  ['function_call without call_id', { model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id'],
  ['function_call_output without output', { model: 'm', input: [{ type: 'function_call_output', call_id: 'c' }] }, 'input[0].output'],
  ['reasoning with a bad summary', { model: 'm', input: [{ type: 'reasoning', summary: 'x' }] }, 'input[0].summary'],
  ['tools not an array', { model: 'm', input: 'x', tools: {} }, 'tools'],
  ['a function tool with a bad name', { model: 'm', input: 'x', tools: [{ type: 'function', name: 'has space', parameters: {} }] }, 'tools[0].name'],
  ['a function tool with non-object parameters', { model: 'm', input: 'x', tools: [{ type: 'function', name: 'f', parameters: 'x' }] }, 'tools[0].parameters'],
  ['a namespace with a built-in tool inside', { model: 'm', input: 'x', tools: [{ type: 'namespace', name: 'ns', description: 'd', tools: [{ type: 'web_search' }] }] }, 'tools[0].tools[0].type'],
  ['tool_choice naming no tool', { model: 'm', input: 'x', tools: [{ type: 'function', name: 'f', parameters: {} }], tool_choice: { type: 'function', name: 'g' } }, 'tool_choice.name'],
  ['tool_choice an unknown mode', { model: 'm', input: 'x', tool_choice: 'sometimes' }, 'tool_choice'],
  ['text.format unknown', { model: 'm', input: 'x', text: { format: { type: 'yaml' } } }, 'text.format.type'],
  ['json_schema without schema', { model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 'out' } } }, 'text.format.schema'],
  ['json_schema with a bad name', { model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 'a b', schema: {} } } }, 'text.format.name'],
  ['reasoning.effort unknown', { model: 'm', input: 'x', reasoning: { effort: 'maximal' } }, 'reasoning.effort'],
  ['max_output_tokens zero', { model: 'm', input: 'x', max_output_tokens: 0 }, 'max_output_tokens'],
  ['temperature above 2', { model: 'm', input: 'x', temperature: 2.5 }, 'temperature'],
  ['top_p above 1', { model: 'm', input: 'x', top_p: 1.5 }, 'top_p'],
  ['metadata value not a string', { model: 'm', input: 'x', metadata: { a: 1 } }, 'metadata.a'],
  ['metadata with 17 keys', { model: 'm', input: 'x', metadata: Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v'])) }, 'metadata'],
  ['store not a boolean', { model: 'm', input: 'x', store: 'yes' }, 'store'],
  ['stream not a boolean', { model: 'm', input: 'x', stream: 'yes' }, 'stream'],
  ['stream_options without stream', { model: 'm', input: 'x', stream_options: { include_obfuscation: false } }, 'stream_options'],
  ['include an unknown value', { model: 'm', input: 'x', include: ['everything'] }, 'include[0]'],
  ['previous_response_id empty', { model: 'm', input: 'x', previous_response_id: '' }, 'previous_response_id'],
  ['truncation unknown', { model: 'm', input: 'x', truncation: 'middle' }, 'truncation'],
  ['conversation with previous_response_id', { model: 'm', input: 'x', conversation: 'conv_1', previous_response_id: 'resp_1' }, 'conversation'],
];

for (const [name, body, param] of cases) {
  test(`400 for ${name}: param ${param}`, async (t) => {
    const before = fake.requests.length;
    const { status, body: answer } = await post(body);
    t.is(status, 400);
    t.is(answer.error.type, 'invalid_request_error');
    t.is(answer.error.param, param);
    t.true(answer.error.message.length > 10);
    t.is(fake.requests.length, before);
  });
}

test('a body that is not JSON, or not an object, is 400', async (t) => {
  t.is((await post('{"model":')).status, 400);
  t.is((await post('[1,2]')).status, 400);
});
