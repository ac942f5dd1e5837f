import test from 'ava';
import { expectedOutputTokens, promptTokensBound, REQUEST_OVERHEAD_TOKENS, TOOLS_OVERHEAD_TOKENS } from './estimate.js';

test('file and audio parts count no tokens in the bound: only the text around them does', (t) => {
  const data = 'QUJD'.repeat(250_000);
  const body = {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'x'.repeat(40) },
          { type: 'file', file: { file_data: `data:application/pdf;base64,${data}`, filename: 'a.pdf' } },
          { type: 'input_audio', input_audio: { data, format: 'wav' } },
        ],
      },
    ],
  };
  const counted = `[{"role":"user","content":[{"type":"text","text":"${'x'.repeat(40)}"},{"type":"file"},{"type":"input_audio"}]}]`;
  t.is(promptTokensBound(body), counted.length + REQUEST_OVERHEAD_TOKENS);
});

test('the bound counts UTF-8 bytes, not characters: a token stands for at least one byte in every tokenizer', (t) => {
  // "é" is 2 bytes, "漢" 3, "🙂" 4 (two UTF-16 units): 9 bytes for 3 characters.
  const body = { messages: [{ role: 'user', content: 'é漢🙂' }] };
  t.is(promptTokensBound(body), '[{"role":"user","content":""}]'.length + 9 + REQUEST_OVERHEAD_TOKENS);
});

test('tool definitions count with their keys (parameter names are prompt text), plus the tools allowance', (t) => {
  const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const messages = [{ role: 'user', content: 'hi' }];
  t.is(promptTokensBound({ messages, tools }), JSON.stringify(messages).length + JSON.stringify(tools).length + REQUEST_OVERHEAD_TOKENS + TOOLS_OVERHEAD_TOKENS);
  // A tool parameter named like a binary part (`file`) is still counted: only conversation parts drop them.
  const fileTool = [{ type: 'function', function: { name: 'g', parameters: { type: 'object', properties: { file: { type: 'string', description: 'path' } } } } }];
  t.is(promptTokensBound({ messages, tools: fileTool }), JSON.stringify(messages).length + JSON.stringify(fileTool).length + REQUEST_OVERHEAD_TOKENS + TOOLS_OVERHEAD_TOKENS);
});

test('a Messages text document source is text; a base64 image source is not', (t) => {
  const text = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'abc' } };
  const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(10_000) } };
  const body = { system: 'be brief', messages: [{ role: 'user', content: [text, image] }] };
  const counted = `"be brief"` + JSON.stringify([{ role: 'user', content: [text, { type: 'image' }] }]);
  t.is(promptTokensBound(body), counted.length + REQUEST_OVERHEAD_TOKENS);
});

/**
 * The bound is checked against two real tokenizers with OpenAI's documented chat overhead (3 tokens
 * per message, 3 to prime the reply): texts of several kinds, including the ones that tokenize worst
 * (CJK, emoji, random bytes-like text, a long unbroken run).
 */
test('the bound is at least what o200k_base and cl100k_base count, with the chat overhead, for text of every kind', async (t) => {
  const o200k = await import('gpt-tokenizer/encoding/o200k_base');
  const cl100k = await import('gpt-tokenizer/encoding/cl100k_base');
  const texts = [
    'Say hi',
    'x',
    '',
    'The quick brown fox jumps over the lazy dog. '.repeat(20),
    'function f(a, b) { return a.map((x) => x * b).filter(Boolean); }\n'.repeat(10),
    '日本語のテキストは一文字ごとに複数のトークンになることがある。'.repeat(5),
    '🙂🚀👩‍👩‍👧‍👦🏳️‍🌈'.repeat(10),
    'ÿþýüûúùø÷öõôóòñðïîíìëêéèçæåäãâáàß'.repeat(5),
    'a'.repeat(3000),
    Array.from({ length: 500 }, (_, index) => String.fromCharCode(33 + ((index * 37) % 94))).join(''),
  ];
  for (const text of texts) {
    const messages = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: text },
    ];
    const bound = promptTokensBound({ messages });
    for (const [name, encoding] of [['o200k_base', o200k], ['cl100k_base', cl100k]] as const) {
      const options = { disallowedSpecial: new Set<string>() };
      const billed = messages.reduce((sum, message) => sum + 3 + encoding.encode(message.role, options).length + encoding.encode(message.content, options).length, 3);
      t.true(bound >= billed, `${name}: bound ${bound} < ${billed} for ${JSON.stringify(text.slice(0, 40))}`);
    }
  }
});

test('a Gemini request is bounded too: its contents and system instruction without inline bytes, its maxOutputTokens times candidateCount', (t) => {
  const data = 'QUJD'.repeat(1000);
  const body = { contents: [{ role: 'user', parts: [{ text: 'hi' }, { inlineData: { mimeType: 'image/png', data } }] }], systemInstruction: { parts: [{ text: 'sys' }] }, generationConfig: { maxOutputTokens: 50, candidateCount: 2 } };
  const counted = '[{"role":"user","parts":[{"text":"hi"},{}]}]'.length + '{"parts":[{"text":"sys"}]}'.length;
  t.is(promptTokensBound(body), counted + REQUEST_OVERHEAD_TOKENS);
  t.deepEqual(expectedOutputTokens(body, 1024), { tokens: 100, bounded: true });
});
