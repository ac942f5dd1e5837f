import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import OpenAI from 'openai';
import { azureOpenAIConformance } from '../plugins/providers/azure-openai/azure-openai-conformance.js';
import { bedrockConformance } from '../plugins/providers/bedrock/bedrock-conformance.js';
import { cohereConformance } from '../plugins/providers/cohere/cohere-conformance.js';
import type { ConformanceSubject, ReceivedRequest, Scenario } from '../core/conformance/index.js';
import { ACCOUNT_KEY, startGateway } from './harness.js';

/**
 * Drives the conformance subjects of the bedrock, azure-openai and cohere plugins through the
 * running gateway with their own renderers, the way the conformance kit will: proves each renderer
 * speaks its provider's wire format as the plugin reads it, and that `checkAuth` accepts what the
 * plugin sends.
 */

const subjects: Array<[string, ConformanceSubject]> = [
  ['bedrock', bedrockConformance],
  ['azure-openai', azureOpenAIConformance],
  ['cohere', cohereConformance],
];

for (const [id, subject] of subjects) {
  test.serial(`${id}: text, stream, tool call, error and truncated scenarios through the gateway`, async (t) => {
    let scenario: Scenario = { kind: 'text', text: 'x', finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1 } };
    const received: ReceivedRequest[] = [];
    const server = createServer(async (incoming, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
      const request: ReceivedRequest = { method: incoming.method ?? '', url: incoming.url ?? '', headers: incoming.headers as Record<string, string>, body: Buffer.concat(chunks) };
      received.push(request);
      const { stream } = subject.fake.classify(request);
      const answer = subject.fake.render(scenario, request, stream);
      response.writeHead(answer.status, answer.headers);
      for (const piece of answer.chunks) {
        response.write(piece);
        await new Promise((resolve) => setImmediate(resolve));
      }
      response.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const gateway = await startGateway({ providers: [subject.registration] });
    const credential = subject.credential ?? 'test-provider-key';
    const client = new OpenAI({
      apiKey: credential,
      baseURL: `${gateway.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': id, 'x-gateway-custom-host': origin, ...subject.headers },
    });
    try {
      scenario = { kind: 'text', text: 'Hello there', finishReason: 'stop', usage: { promptTokens: 4, completionTokens: 2 } };
      const plain = await client.chat.completions.create({
        model: subject.model,
        messages: [
          { role: 'developer', content: 'dev' },
          { role: 'user', content: 'hi' },
        ],
        stop: ['END'],
      });
      t.is(plain.choices[0].message.content, 'Hello there');
      t.deepEqual(plain.usage, { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
      const first = received.at(-1)!;
      t.deepEqual(subject.fake.classify(first), { operation: 'chat', stream: false });
      t.deepEqual(subject.fake.checkAuth(first, credential), []);
      t.deepEqual(subject.fake.roles(first), [subject.developerRole ? 'developer' : 'system', 'user']);
      t.deepEqual(subject.fake.stopSequences(first), ['END']);

      const stream = await client.chat.completions.create({ model: subject.model, messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
      let text = '';
      let total = 0;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        total = chunk.usage?.total_tokens ?? total;
      }
      t.is(text, 'Hello there');
      t.is(total, 6);
      t.deepEqual(subject.fake.checkAuth(received.at(-1)!, credential), []);

      scenario = { kind: 'toolCall', id: 'call_conf', name: 'lookup', arguments: '{"q":"paris"}', usage: { promptTokens: 5, completionTokens: 3 } };
      const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
      const toolStream = await client.chat.completions.create({ model: subject.model, messages: [{ role: 'user', content: 'find' }], tools, stream: true });
      let args = '';
      let callId = '';
      for await (const chunk of toolStream) {
        for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
          callId ||= call.id ?? '';
          args += call.function?.arguments ?? '';
        }
      }
      t.is(callId, 'call_conf');
      t.is(args, '{"q":"paris"}');

      scenario = { kind: 'error', status: 429, message: 'slow down', retryAfter: '2' };
      const error = await t.throwsAsync(client.chat.completions.create({ model: subject.model, messages: [{ role: 'user', content: 'hi' }] }), { instanceOf: OpenAI.RateLimitError });
      t.regex(error!.message, /slow down/);

      scenario = { kind: 'truncated', text: 'Hel' };
      const truncated = await client.chat.completions.create({ model: subject.model, messages: [{ role: 'user', content: 'hi' }], stream: true });
      await t.throwsAsync(async () => {
        for await (const _chunk of truncated) {
          // read until the error
        }
      });
    } finally {
      await gateway.close();
      server.closeAllConnections();
      server.close();
    }
  });
}
