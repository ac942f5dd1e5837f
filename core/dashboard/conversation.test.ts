import test from 'ava';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { publicDirectory } from './static.js';

// The chat view's reading of stored bodies (core/dashboard/public/conversation.js), run in Node:
// the module is plain JavaScript without DOM, served to the page as is.

const conversation: any = await import(pathToFileURL(join(publicDirectory(), 'conversation.js')).href);
const { conversationOf, imagePart, shapeOf, sseEvents } = conversation;

const sse = (events: unknown[]) => events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('') + 'data: [DONE]\n\n';

test('the shape comes from the operation, else from the path', (t) => {
  t.is(shapeOf({ operation: 'responses', path: '/v1/chat/completions' }), 'responses');
  t.is(shapeOf({ operation: 'messages' }), 'messages');
  t.is(shapeOf({ operation: 'imageEdit' }), 'image');
  t.is(shapeOf({ path: '/openai/deployments/x/chat/completions' }), 'chat');
  t.is(shapeOf({ path: '/v1/embeddings' }), 'embed');
  t.is(shapeOf({ operation: 'speech', path: '/v1/audio/speech' }), undefined);
});

test('images: data: URLs of raster types become thumbnails; SVG, other data and http(s) do not', (t) => {
  t.deepEqual(imagePart('data:image/png;base64,iVBORw0KGgo='), { type: 'image', src: 'data:image/png;base64,iVBORw0KGgo=' });
  t.is(imagePart('data:image/svg+xml;base64,PHN2Zz4=').type, 'chip');
  t.is(imagePart('data:text/html;base64,PGI+').type, 'chip');
  t.deepEqual(imagePart('https://example.test/a.png'), { type: 'link', label: 'image', url: 'https://example.test/a.png' });
  t.is(imagePart('javascript:alert(1)').type, 'chip');
  // A Messages document by URL: a link only for http(s).
  const blocks = (url: string) => conversationOf({ operation: 'messages', request_body: JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'document', title: 'Plan', source: { type: 'url', url } }] }] }), response_body: null }).request[0].parts[0];
  t.deepEqual(blocks('https://example.test/plan.pdf'), { type: 'link', label: 'Plan', url: 'https://example.test/plan.pdf' });
  t.is(blocks('javascript:alert(1)').type, 'chip');
});

test('a chat stream stored as raw SSE is assembled: text, and tool calls from their argument deltas', (t) => {
  const raw = sse([
    { choices: [{ index: 0, delta: { role: 'assistant', content: 'Let me ' } }] },
    { choices: [{ index: 0, delta: { content: 'check.' } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'get_weather', arguments: '{"ci' } }] } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 'ty":"Oslo"}' } }] }, finish_reason: 'tool_calls' }] },
  ]);
  t.is(sseEvents(raw).length, 4);
  const view = conversationOf({ operation: 'chat', request_body: JSON.stringify({ messages: [{ role: 'user', content: 'Weather?' }] }), response_body: raw });
  t.deepEqual(view.answer, [
    {
      role: 'assistant',
      streamed: true,
      finish: 'tool_calls',
      parts: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_call', name: 'get_weather', id: 'call_1', arguments: '{\n  "city": "Oslo"\n}' },
      ],
    },
  ]);
  t.deepEqual(view.problems, []);
});

test('the log writer’s stream summary is the answer; a truncated one says so', (t) => {
  const view = conversationOf({ operation: 'chat', request_body: '{"messages":[]}', response_body: JSON.stringify({ stream: true, model: 'm', content: 'Hel', finish_reason: 'length', truncated: true }) });
  t.deepEqual(view.answer, [{ role: 'assistant', streamed: true, finish: 'length', parts: [{ type: 'text', text: 'Hel' }] }]);
  t.true(view.problems.some((problem: string) => problem.includes('size cap')));
});

test('a Responses stream: the final response.completed event gives the output items', (t) => {
  const output = [
    { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think.' }] },
    { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{"q":"x"}' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] },
  ];
  const raw = [
    `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', response: { output: [] } })}\n\n`,
    `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'Done.' })}\n\n`,
    `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: { output } })}\n\n`,
  ].join('');
  const view = conversationOf({ operation: 'responses', request_body: JSON.stringify({ input: 'Go', instructions: 'Be brief.' }), response_body: raw });
  t.deepEqual(view.request, [
    { role: 'instructions', parts: [{ type: 'text', text: 'Be brief.' }] },
    { role: 'user', parts: [{ type: 'text', text: 'Go' }] },
  ]);
  t.deepEqual(view.answer.map((turn: any) => [turn.item, turn.parts[0].type, turn.streamed]), [['reasoning', 'reasoning', true], ['function_call', 'tool_call', true], ['message', 'text', true]]);
});

test('a Messages stream is assembled from its content block deltas', (t) => {
  const raw = [
    { type: 'message_start', message: { role: 'assistant', content: [] } },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hm' } },
    { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi ' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'there' } },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'tu', name: 'f', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '1}' } },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' } },
  ].map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
  const view = conversationOf({ operation: 'messages', request_body: JSON.stringify({ system: [{ type: 'text', text: 'S' }], messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu0', content: [{ type: 'text', text: 'r' }], is_error: true }] }] }), response_body: raw });
  t.deepEqual(view.answer[0].parts, [
    { type: 'reasoning', text: 'Hm' },
    { type: 'text', text: 'Hi there' },
    { type: 'tool_call', name: 'f', id: 'tu', arguments: '{\n  "a": 1\n}' },
  ]);
  t.is(view.answer[0].finish, 'tool_use');
  t.deepEqual(view.request[1].parts[0], { type: 'tool_result', id: 'tu0', text: 'r', images: [], error: true });
});

test('completions, embeddings (base64 vectors counted, not shown) and image outputs', (t) => {
  const completion = conversationOf({ operation: 'completion', request_body: '{"prompt":["a","b"]}', response_body: JSON.stringify({ choices: [{ text: 'A', finish_reason: 'stop' }] }) });
  t.deepEqual(completion.request.map((turn: any) => turn.parts[0].text), ['a', 'b']);
  t.deepEqual(completion.answer, [{ role: 'completion', finish: 'stop', parts: [{ type: 'text', text: 'A' }] }]);
  const vector = Buffer.from(new Float32Array(256).buffer).toString('base64');
  const embed = conversationOf({ operation: 'embed', request_body: '{"input":"one"}', response_body: JSON.stringify({ data: [{ embedding: vector }] }) });
  t.deepEqual(embed.answer[0].parts, [{ type: 'vectors', count: 1, dimensions: '256' }]);
  const image = conversationOf({ operation: 'imageGenerate', request_body: '{"prompt":"p","n":1}', response_body: JSON.stringify({ data: [{ b64_json: 'iVBORw0KGgo=' }, { url: 'https://example.test/i.png' }] }) });
  t.deepEqual(image.answer[0].parts, [
    { type: 'image', src: 'data:image/png;base64,iVBORw0KGgo=' },
    { type: 'link', label: 'generated image', url: 'https://example.test/i.png' },
  ]);
});

test('errors, unlogged and truncated bodies are told, not guessed', (t) => {
  const failed = conversationOf({ operation: 'chat', request_body: '{"messages":[]}', response_body: JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }) });
  t.deepEqual(failed.answer, [{ role: 'error', parts: [{ type: 'text', text: 'server_error: overloaded' }] }]);
  const unlogged = conversationOf({ operation: 'chat', request_body: null, response_body: null });
  t.deepEqual(unlogged.problems, ['The request body was not logged.', 'The response body was not logged.']);
  const cut = conversationOf({ operation: 'chat', request_body: '{"messages":[{"role":"user","content":"abc…[truncated, 99999 in all]', response_body: null });
  t.is(cut.request, undefined);
  t.regex(cut.problems[0], /not complete JSON/);
  t.deepEqual(conversationOf({ operation: 'speech', request_body: '{}', response_body: null }).problems, ['This operation has no chat view: see the raw bodies.']);
});
