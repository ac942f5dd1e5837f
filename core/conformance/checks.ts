import OpenAI from 'openai';
import { type Check, type CheckContext, CheckFailure, CheckSkipped, expect, routedAs } from './check.js';
import { KIT_ACCOUNT_KEY } from './gateway.js';
import { audioChecks } from './audio-checks.js';
import { imageChecks } from './image-checks.js';
import { rerankChecks } from './rerank-checks.js';
import type { ReceivedRequest, Scenario } from '../spec/conformance.js';

export { type Check, type CheckContext, CheckFailure, CheckSkipped, expect } from './check.js';

const show = (value: unknown) => JSON.stringify(value);
const USAGE = { promptTokens: 11, completionTokens: 7 };
const TEXT = 'Conformance answer: the quick brown fox jumps over the lazy dog.';
const text = (extra: Partial<Extract<Scenario, { kind: 'text' }>> = {}): Scenario => ({ kind: 'text', text: TEXT, finishReason: 'stop', usage: USAGE, ...extra });
const TOOL = { kind: 'toolCall', id: 'call_conformance_1', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius","days":[1,2,3]}', usage: USAGE } as const;
const TOOLS = [
  {
    type: 'function' as const,
    function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  },
];
const user = [{ role: 'user' as const, content: 'Say the conformance answer.' }];

const needsTools = (context: CheckContext) => {
  if (context.subject.supportsTools === false) throw new CheckSkipped('the provider does not support tool calls (declared)');
};

const needsChat = (context: CheckContext, stream = false) => {
  const chat = context.plugin.operations.chat;
  if (!chat) throw new CheckSkipped('the plugin declares no chat operation');
  if (stream && !chat.stream) throw new CheckSkipped('the plugin declares no chat stream');
};

/** The requests the fake received while `action` ran. */
async function capture<T>(context: CheckContext, scenario: Scenario, action: () => Promise<T>): Promise<{ result: T; requests: ReceivedRequest[] }> {
  context.server.scenario = scenario;
  const before = context.server.received.length;
  const result = await action();
  return { result, requests: context.server.received.slice(before) };
}

const expectUsage = (usage: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null | undefined, where: string) => {
  expect(usage, `${where}: no usage`);
  expect(
    usage.prompt_tokens === USAGE.promptTokens && usage.completion_tokens === USAGE.completionTokens && usage.total_tokens === USAGE.promptTokens + USAGE.completionTokens,
    `${where}: usage ${show(usage)}, expected ${USAGE.promptTokens}/${USAGE.completionTokens}/${USAGE.promptTokens + USAGE.completionTokens}`,
  );
};

/** Raw SSE through the gateway: the `data:` payloads in order. */
async function rawStream(context: CheckContext, body: Record<string, unknown>): Promise<string[]> {
  const gatewayUrl = context.gateway.url;
  const response = await fetch(`${gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...context.rawHeaders, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const payload = await response.text();
  expect(response.status === 200, `raw stream answered HTTP ${response.status}: ${payload.slice(0, 200)}`);
  return payload
    .split(/\r?\n\r?\n/)
    .map((block) => block.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n'))
    .filter((data) => data !== '');
}

async function collectStream(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const content = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
  return { chunks, content };
}

const chatPlain: Check = {
  name: 'chat.plain',
  description: 'a plain chat answer arrives whole: content, finish_reason, usage',
  async run(context) {
    needsChat(context);
    const { result } = await capture(context, text(), () => context.client.chat.completions.create({ model: context.subject.model, messages: user }));
    expect(result.object === 'chat.completion', `object is ${show(result.object)}`);
    expect(result.choices.length === 1, `${result.choices.length} choices, expected 1`);
    expect(result.choices[0].message.content === TEXT, `content ${show(result.choices[0].message.content)}, expected ${show(TEXT)}`);
    expect(result.choices[0].finish_reason === 'stop', `finish_reason ${show(result.choices[0].finish_reason)}, expected "stop"`);
    expectUsage(result.usage, 'response');
  },
};

const chatStream: Check = {
  name: 'chat.stream',
  description: 'streamed deltas concatenate to the plain answer, every chunk has usage: null, the stream ends with [DONE]',
  async run(context) {
    needsChat(context, true);
    const { result } = await capture(context, text(), async () =>
      collectStream(await context.client.chat.completions.create({ model: context.subject.model, messages: user, stream: true })),
    );
    expect(result.content === TEXT, `deltas give ${show(result.content)}, expected ${show(TEXT)}`);
    expect(result.chunks.length > 1, 'the answer came in a single chunk');
    const withUsage = result.chunks.filter((chunk) => chunk.usage !== null);
    expect(withUsage.length === 0, `${withUsage.length} chunk(s) without "usage": null when include_usage was not asked: ${show(withUsage[0])?.slice(0, 200)}`);
    expect(result.chunks.some((chunk) => chunk.choices[0]?.finish_reason === 'stop'), 'no chunk carries finish_reason "stop"');
    const events = await rawStream(context, { model: context.subject.model, messages: user, stream: true });
    expect(events.at(-1) === '[DONE]', `the stream's last event is ${show(events.at(-1))?.slice(0, 120)}, expected [DONE]`);
  },
};

const chatStreamUsage: Check = {
  name: 'chat.stream.usage',
  description: 'with include_usage, one last chunk has choices: [] and the usage; every other chunk has usage: null',
  async run(context) {
    needsChat(context, true);
    const { result: events } = await capture(context, text(), () =>
      rawStream(context, { model: context.subject.model, messages: user, stream: true, stream_options: { include_usage: true } }),
    );
    expect(events.at(-1) === '[DONE]', 'the stream does not end with [DONE]');
    const chunks = events.slice(0, -1).map((data) => JSON.parse(data) as OpenAI.Chat.Completions.ChatCompletionChunk);
    const usageChunks = chunks.filter((chunk) => chunk.choices.length === 0);
    expect(usageChunks.length === 1, `${usageChunks.length} chunks with choices: [], expected exactly one usage chunk`);
    expect(chunks.at(-1) === usageChunks[0], 'the usage chunk is not the last chunk before [DONE]');
    expectUsage(usageChunks[0].usage, 'usage chunk');
    const others = chunks.slice(0, -1).filter((chunk) => chunk.usage !== null);
    expect(others.length === 0, `${others.length} other chunk(s) without "usage": null`);
  },
};

const chatLength: Check = {
  name: 'chat.length',
  description: 'an answer cut by the token limit arrives with finish_reason length, plain and streamed',
  async run(context) {
    needsChat(context);
    const scenario = text({ finishReason: 'length' });
    const { result } = await capture(context, scenario, () => context.client.chat.completions.create({ model: context.subject.model, messages: user, max_tokens: 7 }));
    expect(result.choices[0]?.message.content === TEXT, `content ${show(result.choices[0]?.message.content)}, expected ${show(TEXT)}`);
    expect(result.choices[0].finish_reason === 'length', `finish_reason ${show(result.choices[0].finish_reason)}, expected "length"`);
    if (!context.plugin.operations.chat?.stream) return;
    const { result: streamed } = await capture(context, scenario, async () =>
      collectStream(await context.client.chat.completions.create({ model: context.subject.model, messages: user, max_tokens: 7, stream: true })),
    );
    expect(streamed.content === TEXT, `deltas give ${show(streamed.content)}, expected ${show(TEXT)}`);
    const reasons = streamed.chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter((reason) => reason != null);
    expect(show(reasons) === show(['length']), `streamed finish reasons ${show(reasons)}, expected ["length"]`);
  },
};

function assembleToolCalls(chunks: OpenAI.Chat.Completions.ChatCompletionChunk[]) {
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  for (const chunk of chunks) {
    for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
      const call = calls.get(delta.index) ?? { id: '', name: '', arguments: '' };
      if (delta.id) call.id = delta.id;
      if (delta.function?.name) call.name += delta.function.name;
      if (delta.function?.arguments) call.arguments += delta.function.arguments;
      calls.set(delta.index, call);
    }
  }
  return [...calls.values()];
}

const toolsPlain: Check = {
  name: 'tools.plain',
  description: 'a tool call arrives with its id, name and exact JSON arguments, finish_reason tool_calls',
  async run(context) {
    needsChat(context);
    needsTools(context);
    const { result } = await capture(context, TOOL, () =>
      context.client.chat.completions.create({ model: context.subject.model, messages: user, tools: TOOLS }),
    );
    const call = result.choices[0]?.message.tool_calls?.[0];
    expect(call && call.type === 'function', `no function tool call in ${show(result.choices[0]?.message)?.slice(0, 200)}`);
    expect(call.id === TOOL.id, `tool call id ${show(call.id)}, expected ${show(TOOL.id)}`);
    expect(call.function.name === TOOL.name, `tool name ${show(call.function.name)}`);
    expect(call.function.arguments === TOOL.arguments, `arguments ${show(call.function.arguments)}, expected ${show(TOOL.arguments)}`);
    expect(result.choices[0].finish_reason === 'tool_calls', `finish_reason ${show(result.choices[0].finish_reason)}, expected "tool_calls"`);
  },
};

const toolsStream: Check = {
  name: 'tools.stream',
  description: 'a streamed tool call assembles (id, name, arguments across chunks) to the same call',
  async run(context) {
    needsChat(context, true);
    needsTools(context);
    const { result } = await capture(context, TOOL, async () =>
      collectStream(await context.client.chat.completions.create({ model: context.subject.model, messages: user, tools: TOOLS, stream: true })),
    );
    const calls = assembleToolCalls(result.chunks);
    expect(calls.length === 1, `${calls.length} tool calls assembled, expected 1`);
    expect(calls[0].id === TOOL.id, `tool call id ${show(calls[0].id)}`);
    expect(calls[0].name === TOOL.name, `tool name ${show(calls[0].name)}`);
    expect(calls[0].arguments === TOOL.arguments, `assembled arguments ${show(calls[0].arguments)}, expected ${show(TOOL.arguments)}`);
    expect(result.chunks.some((chunk) => chunk.choices[0]?.finish_reason === 'tool_calls'), 'no chunk carries finish_reason "tool_calls"');
  },
};

const toolResult: Check = {
  name: 'tools.result',
  description:
    "a tool-role message (the result of the assistant's call) reaches the provider as a tool turn; a provider that declares no tools receives it too, with no tools sent",
  async run(context) {
    needsChat(context);
    const toolLess = context.subject.supportsTools === false;
    const messages = [
      ...user,
      { role: 'assistant' as const, content: null, tool_calls: [{ id: TOOL.id, type: 'function' as const, function: { name: TOOL.name, arguments: TOOL.arguments } }] },
      { role: 'tool' as const, tool_call_id: TOOL.id, content: 'Sunny, 21 degrees.' },
    ];
    const { result, requests } = await capture(context, text(), () =>
      context.client.chat.completions.create({ model: context.subject.model, messages, ...(toolLess ? {} : { tools: TOOLS }) }),
    );
    expect(requests.length === 1, `the provider received ${requests.length} requests`);
    const roles = context.subject.fake.roles(requests[0]);
    expect(show(roles) === show(['user', 'assistant', 'tool']), `the provider received roles ${show(roles)}, expected ["user","assistant","tool"]`);
    expect(result.choices[0]?.message.content === TEXT, `content ${show(result.choices[0]?.message.content)}, expected ${show(TEXT)}`);
  },
};

const developerRole: Check = {
  name: 'developer-role',
  description: 'a developer message reaches the provider as developer, or as system when the plugin declares no developer role',
  async run(context) {
    needsChat(context);
    const declared = context.plugin.capabilities?.developerRole?.(context.subject.model) ?? true;
    expect(
      context.subject.developerRole === undefined || context.subject.developerRole === declared,
      `the subject expects developerRole ${context.subject.developerRole} but the plugin declares ${declared}`,
    );
    const messages = [{ role: 'developer' as const, content: 'Answer briefly.' }, ...user];
    const { requests } = await capture(context, text(), () => context.client.chat.completions.create({ model: context.subject.model, messages }));
    expect(requests.length === 1, `the provider received ${requests.length} requests`);
    const roles = context.subject.fake.roles(requests[0]);
    const expected = [declared ? 'developer' : 'system', 'user'];
    expect(show(roles) === show(expected), `the provider received roles ${show(roles)}, expected ${show(expected)}`);
  },
};

const stopSequences: Check = {
  name: 'stop-sequences',
  description: 'stop sequences reach the provider',
  async run(context) {
    needsChat(context);
    const stop = ['END', '###'];
    const { requests } = await capture(context, text(), () => context.client.chat.completions.create({ model: context.subject.model, messages: user, stop }));
    const received = context.subject.fake.stopSequences(requests[0]);
    expect(show(received) === show(stop), `the provider received stop ${show(received)}, expected ${show(stop)}`);
  },
};

const chatN: Check = {
  name: 'chat.n',
  description: 'n > 1 returns that many choices, in order',
  async run(context) {
    needsChat(context);
    if (context.subject.supportsN === false) throw new CheckSkipped('the provider does not support n > 1 (declared)');
    const { result } = await capture(context, text({ choices: 2 }), () => context.client.chat.completions.create({ model: context.subject.model, messages: user, n: 2 }));
    expect(result.choices.length === 2, `${result.choices.length} choices, expected 2`);
    result.choices.forEach((choice, index) => {
      expect(choice.index === index, `choice ${index} has index ${choice.index}`);
      const content = choice.message.content ?? '';
      expect(content.startsWith(TEXT) && content.trimEnd().endsWith(String(index)), `choice ${index} content ${show(content)}`);
    });
  },
};

let traces = 0;
/** Runs an embeddings request and checks the gateway handled it as the embed operation. */
async function embedRequest(context: CheckContext, scenario: Scenario, requireRouted = true) {
  const trace = `conformance-embed-${process.pid}-${++traces}`;
  const model = context.subject.embeddingModel ?? context.subject.model;
  context.server.scenario = scenario;
  const outcome = await context.client.embeddings
    .create(
      { model, input: ['first text', 'second text'].slice(0, context.subject.maxEmbeddingInputs ?? 2), encoding_format: 'float' },
      { headers: { 'x-gateway-trace-id': trace } },
    )
    .then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
  const operation = await routedAs(context, trace);
  if (requireRouted && operation !== 'embed') {
    throw new CheckFailure(`POST /v1/embeddings ran as ${operation ?? 'nothing'}, not as the embed operation`);
  }
  return outcome;
}

const embeddings: Check = {
  name: 'embeddings',
  description: 'embeddings come back as float vectors, in order, with usage',
  async run(context) {
    if (!context.plugin.operations.embed) throw new CheckSkipped('the plugin declares no embeddings');
    const vectors = [
      [0.125, -0.5, 0.25],
      [0.75, 0.0625, -1],
    ].slice(0, context.subject.maxEmbeddingInputs ?? 2);
    const outcome = await embedRequest(context, { kind: 'embedding', vectors, promptTokens: 6 });
    if ('error' in outcome) throw new CheckFailure(`the embeddings request failed: ${(outcome.error as Error).message}`);
    const response = outcome.value;
    expect(response.object === 'list', `object ${show(response.object)}`);
    expect(show(response.data.map((item) => item.embedding)) === show(vectors), `vectors ${show(response.data.map((item) => item.embedding))?.slice(0, 200)}`);
    expect(show(response.data.map((item) => item.index)) === show(vectors.map((_, index) => index)), 'indices are not 0, 1, …');
    if (context.subject.reportsEmbeddingUsage === false) {
      expect(response.usage?.prompt_tokens === 0 && response.usage?.total_tokens === 0, `usage ${show(response.usage)} (declared unreported: expected zeros)`);
      return;
    }
    expect(response.usage?.prompt_tokens === 6 && response.usage?.total_tokens === 6, `usage ${show(response.usage)}`);
  },
};

const errorCheck = (status: number): Check => ({
  name: `errors.${status}`,
  description: `an upstream ${status} keeps its status${status === 429 ? ' and Retry-After' : ''}, with the provider's message in the OpenAI error shape`,
  async run(context) {
    const message = `Conformance says ${status}.`;
    const scenario: Scenario = { kind: 'error', status, message, retryAfter: status === 429 ? '7' : undefined };
    let error: unknown;
    if (context.plugin.operations.chat) {
      context.server.scenario = scenario;
      error = await context.client.chat.completions.create({ model: context.subject.model, messages: user }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
    } else if (context.plugin.operations.embed) {
      const outcome = await embedRequest(context, scenario);
      error = 'error' in outcome ? outcome.error : undefined;
    } else {
      throw new CheckSkipped('the plugin declares neither chat nor embeddings');
    }
    expect(error, `the request succeeded, expected HTTP ${status}`);
    expect(error instanceof OpenAI.APIError, `the SDK raised ${(error as Error).name}: ${(error as Error).message}`);
    expect(error.status === status, `the client got HTTP ${error.status}, expected ${status}`);
    expect(error.message.includes(message), `the error message ${show(error.message)} does not carry the provider's ${show(message)}`);
    const body = error.error as Record<string, unknown> | undefined;
    expect(body && typeof body.type === 'string', `the error body has no type: ${show(body)}`);
    expect(body.provider === context.plugin.id, `the error body names provider ${show(body.provider)}, expected ${show(context.plugin.id)}`);
    if (status === 429) {
      const retryAfter = error.headers?.get('retry-after');
      expect(retryAfter === '7', `Retry-After is ${show(retryAfter)}, expected "7"`);
    }
  },
});

const earlyEnd: Check = {
  name: 'stream.early-end',
  description: 'a stream the provider cuts short ends the client stream with an error the SDK raises',
  async run(context) {
    needsChat(context, true);
    const partial = 'Partial answer that never ends';
    context.server.scenario = { kind: 'truncated', text: partial };
    let content = '';
    let raised: unknown;
    try {
      const stream = await context.client.chat.completions.create({ model: context.subject.model, messages: user, stream: true });
      for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
    } catch (error) {
      raised = error;
    }
    expect(raised, `the stream ended without an error after ${show(content)}`);
    expect(raised instanceof OpenAI.APIError, `the SDK raised ${(raised as Error).name}, not an APIError: ${(raised as Error).message}`);
    expect(partial.startsWith(content), `the client got ${show(content)}, not a prefix of ${show(partial)}`);
  },
};

const authHeaders: Check = {
  name: 'auth',
  description: "the credential travels exactly as the provider documents; the gateway's own key never leaves",
  async run(context) {
    let requests: ReceivedRequest[];
    if (context.plugin.operations.chat) {
      // Whatever the answer, the request as sent is what is checked.
      ({ requests } = await capture(context, text(), () =>
        context.client.chat.completions.create({ model: context.subject.model, messages: user }).catch(() => undefined),
      ));
    } else if (context.plugin.operations.embed) {
      const before = context.server.received.length;
      // Credentials are applied to every request, pass-through included, so this runs on any core.
      await embedRequest(context, { kind: 'embedding', vectors: [[1], [2]], promptTokens: 2 }, false);
      requests = context.server.received.slice(before);
    } else {
      throw new CheckSkipped('the plugin declares neither chat nor embeddings');
    }
    expect(requests.length === 1, `the provider received ${requests.length} requests`);
    const problems = context.subject.fake.checkAuth(requests[0], context.credential);
    expect(problems.length === 0, problems.join('; '));
    const leaked = Object.entries(requests[0].headers).filter(([name, value]) => name.startsWith('x-gateway-') || value?.includes(KIT_ACCOUNT_KEY));
    expect(leaked.length === 0, `gateway headers reached the provider: ${leaked.map(([name]) => name).join(', ')}`);
  },
};

/** The battery, in the order the table shows it. */
export const CHECKS: readonly Check[] = [
  chatPlain,
  chatStream,
  chatStreamUsage,
  chatLength,
  toolsPlain,
  toolsStream,
  toolResult,
  developerRole,
  stopSequences,
  chatN,
  embeddings,
  ...[400, 401, 403, 404, 429, 500, 503].map(errorCheck),
  earlyEnd,
  authHeaders,
  ...rerankChecks,
  ...imageChecks,
  ...audioChecks,
];
