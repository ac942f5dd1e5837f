import test from 'ava';
import { chatRequestOf, jsonSchemaOf } from '../../core/api/protocols/gemini/to-chat.js';
import { GeminiStreamEncoder } from '../../core/api/protocols/gemini/stream-encoder.js';
import type { GeminiRequest } from '../../core/spec/gemini.js';
import { OPENAI_CONTENT_PARTS } from '../../core/spec/content-parts.js';
import { checkGeminiStream } from './stream-grammar.js';

const PDF = Buffer.from('%PDF-1.4').toString('base64');

test('the translation maps config, tools and tool config, and names every field it drops', (t) => {
  const request: GeminiRequest = {
    model: 'm',
    stream: 'sse',
    contents: [
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'thinking…', thought: true }, { functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'sig' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: { result: 'done' } } }] },
    ],
    systemInstruction: { parts: [{ text: 'Sys' }] },
    tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT', properties: { a: { type: 'INTEGER', nullable: true } } } }] }, { codeExecution: {} }],
    toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } },
    safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }],
    generationConfig: { topK: 3, candidateCount: 2, seed: 5, thinkingConfig: { thinkingBudget: 0 }, responseModalities: ['TEXT'] },
    labels: { team: 'a' },
  };
  const { request: chat, dropped } = chatRequestOf(request, 'p', ['thinking']);
  t.deepEqual(chat.messages, [
    { role: 'system', content: 'Sys' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_g1_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
    { role: 'tool', tool_call_id: 'call_g1_1', content: 'done' },
  ]);
  t.like(chat, { stream: true, n: 2, seed: 5, thinking: { type: 'disabled' }, tool_choice: { type: 'function', function: { name: 'f' } } });
  t.deepEqual((chat.tools as any)[0].function.parameters, { type: 'object', properties: { a: { type: ['integer', 'null'] } } });
  t.deepEqual([...dropped].sort(), [
    'contents.parts.thought',
    'contents.parts.thoughtSignature',
    'generationConfig.responseModalities',
    'generationConfig.topK',
    'labels',
    'safetySettings',
    'tools.codeExecution',
  ]);
});

test('a document reaches only a provider that declared file parts; a file URI and a cached content are refused, naming provider and field', (t) => {
  const pdf: GeminiRequest = { model: 'm', contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'application/pdf', data: PDF } }] }] };
  t.deepEqual(chatRequestOf(pdf, 'openai', [], OPENAI_CONTENT_PARTS).request.messages[0].content, [{ type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'document.pdf' } }]);
  const refused = t.throws(() => chatRequestOf(pdf, 'groq', [], {}));
  t.regex(refused.message, /"groq".*contents\[0\]\.parts\[0\]\.inlineData/);
  const uri: GeminiRequest = { model: 'm', contents: [{ parts: [{ fileData: { mimeType: 'video/mp4', fileUri: 'gs://b/v.mp4' } }] }] };
  t.regex(t.throws(() => chatRequestOf(uri, 'openai', [], OPENAI_CONTENT_PARTS)).message, /"openai".*contents\[0\]\.parts\[0\]\.fileData/);
  t.regex(t.throws(() => chatRequestOf({ ...uri, cachedContent: 'cachedContents/x' }, 'openai', [])).message, /"openai".*cachedContent/);
});

test('Google\'s schema becomes JSON Schema: types lower-cased, nullable as a union, propertyOrdering left out', (t) => {
  t.deepEqual(jsonSchemaOf({ type: 'ARRAY', items: { type: 'STRING', nullable: true }, propertyOrdering: ['x'] }), { type: 'array', items: { type: ['string', 'null'] } });
});

test('the stream encoder gathers a streamed function call and sends it whole with the finish and the usage, in both framings', (t) => {
  for (const sse of [true, false]) {
    const encoder = new GeminiStreamEncoder('m', sse);
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk' as const, created: 1, model: 'm-1', choices: [{ index: 0, delta, finish_reason: finish }] });
    let out = encoder.chunk(chunk({ role: 'assistant', content: 'Let me check. ' }));
    out += encoder.chunk(chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"a":' } }] }));
    out += encoder.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: '2}' } }] }));
    out += encoder.chunk(chunk({}, 'tool_calls'));
    out += encoder.end({ prompt_tokens: 4, completion_tokens: 6, total_tokens: 10, completion_tokens_details: { reasoning_tokens: 2 } });
    const checked = checkGeminiStream(out, sse ? 'sse' : 'array');
    t.deepEqual(checked.candidates.get(0), { text: 'Let me check. ', thoughts: '', functionCalls: [{ id: 'call_1', name: 'f', args: { a: 2 } }], finishReason: 'STOP' });
    t.deepEqual(checked.usage, { promptTokenCount: 4, candidatesTokenCount: 4, totalTokenCount: 10, thoughtsTokenCount: 2 });
  }
});
