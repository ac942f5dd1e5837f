import type { ExecutionContext } from 'ava';
import type OpenAI from 'openai';
import { BootError } from '../../core/errors.js';
import type { PolicyDefinition } from '../../core/guardrails/policy.js';
import { PolicyRegistry } from '../../core/guardrails/registry.js';
import type { GuardrailInput, GuardrailRegistration, GuardrailVerdict } from '../../core/spec/guardrail.js';
import { type Fake, type FakeHandler, openAIChatHandler, startFake } from '../fakes/openai-fake.js';
import { gatewayHeaders, sdkClient, startGateway, type TestGateway } from '../harness.js';
import { pluginDependencies } from '../plugin-dependencies.js';

/** Creates the guardrail and judges `texts` (input side, not partial, unless overridden). */
export async function judge(
  registration: GuardrailRegistration,
  texts: readonly string[],
  overrides: Partial<GuardrailInput> = {},
): Promise<GuardrailVerdict> {
  const plugin = registration.create(pluginDependencies());
  return plugin.check({ side: 'input', operation: 'chat', model: 'gpt-4o', texts, metadata: {}, parameters: {}, partial: false, ...overrides });
}

/** Builds a policy registry around one guardrail (boot validation), returning the BootError or undefined. */
export function bootError(registration: GuardrailRegistration, side: 'input' | 'output' = registration.manifest.stages[0]): BootError | undefined {
  try {
    new PolicyRegistry({ checked: { [side]: [registration] } }, () => pluginDependencies());
    return undefined;
  } catch (error) {
    if (error instanceof BootError) return error;
    throw error;
  }
}

/** Asserts that boot refuses the params with a message naming the policy, the guardrail and `field`. */
export function assertRefused(t: ExecutionContext, registration: GuardrailRegistration, field: string): void {
  const error = bootError(registration);
  t.truthy(error, 'boot accepted invalid params');
  t.regex(error!.message, /policy "checked"/);
  t.true(error!.message.includes(`"${registration.manifest.id}"`), error!.message);
  t.true(error!.message.includes(field), error!.message);
}

/** A text of about `length` characters of ordinary prose. */
export const longText = (length: number): string => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(length / 45)).slice(0, length);

export interface PolicyGateway {
  readonly fake: Fake;
  readonly gateway: TestGateway;
  readonly client: OpenAI;
  close(): Promise<void>;
}

/** A fake upstream and a gateway whose default policy is `policy`, with the SDK pointed at it. */
export async function policyGateway(
  policy: PolicyDefinition,
  handler: FakeHandler = openAIChatHandler,
  headers: Record<string, string> = {},
  environment: NodeJS.ProcessEnv = {},
): Promise<PolicyGateway> {
  const fake = await startFake(handler);
  const gateway = await startGateway({ policies: { tested: policy }, defaultPolicy: 'tested' }, environment);
  return {
    fake,
    gateway,
    client: sdkClient(gateway.url, fake.baseUrl, headers),
    async close() {
      await gateway.close();
      await fake.close();
    },
  };
}

/** A fake answering every chat request with `content` (plain). */
export const answering =
  (content: string): FakeHandler =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o',
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
      }),
    );
  };

/** A fake streaming `pieces` as content chunks (then finish, usage when asked, [DONE]), `gapMs` apart. */
export const streaming =
  (pieces: readonly string[], gapMs = 0, options: { progress?: { written: number }; holdAfter?: number } = {}): FakeHandler =>
  async (request, response) => {
    const body = request.json();
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const closed = new Promise<void>((resolve) => response.once('close', () => resolve()));
    const chunk = (choice: object) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [choice], usage: null })}\n\n`;
    response.write(chunk({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }));
    for (const [index, piece] of pieces.entries()) {
      if (response.destroyed) return;
      response.write(chunk({ index: 0, delta: { content: piece }, finish_reason: null }));
      if (options.progress) options.progress.written++;
      // Holding here makes "the gateway cancelled the request" independent of machine speed: the rest
      // is written only if the gateway has not gone away within 10 s.
      if (index + 1 === options.holdAfter) await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (gapMs) await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    if (response.destroyed) return;
    response.write(chunk({ index: 0, delta: {}, finish_reason: 'stop' }));
    if (body.stream_options?.include_usage) {
      response.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [], usage: { prompt_tokens: 3, completion_tokens: pieces.length, total_tokens: 3 + pieces.length } })}\n\n`,
      );
    }
    response.end('data: [DONE]\n\n');
  };

/** Sends one user message through the SDK; returns the answer's content and finish reason. */
export async function ask(client: OpenAI, content: string, extra: Record<string, unknown> = {}): Promise<{ content: string | null; finishReason: string | null }> {
  const completion = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content }], ...extra });
  return { content: completion.choices[0].message.content, finishReason: completion.choices[0].finish_reason };
}

/** Streams one user message through the SDK; returns the concatenated content and the last finish reason. */
export async function askStream(client: OpenAI, content: string): Promise<{ content: string; finishReason: string | null }> {
  const stream = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content }], stream: true });
  let text = '';
  let finishReason: string | null = null;
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? '';
      finishReason = choice.finish_reason ?? finishReason;
    }
  }
  return { content: text, finishReason };
}

/** Asserts that `promise` rejects with the gateway's 400 guardrail_denied. */
export async function assertDenied(t: ExecutionContext, promise: Promise<unknown>): Promise<void> {
  const error = await t.throwsAsync(promise);
  t.like(error as object, { status: 400, code: 'guardrail_denied', type: 'invalid_request_error' });
}

/** POSTs a streamed request through the gateway and returns the raw bytes the client received. */
export async function rawStream(url: string, customHost: string, trace: string, path: string, body: Record<string, unknown>, includeUsage: boolean): Promise<string> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: gatewayHeaders(customHost, { 'content-type': 'application/json', 'x-gateway-trace-id': trace }),
    body: JSON.stringify({ ...body, stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) }),
  });
  return response.text();
}

/** The `data:` payloads of an SSE text, in order. */
export const events = (raw: string): string[] =>
  raw
    .split('\n\n')
    .filter(Boolean)
    .map((event) => event.replace(/^data: /, ''));
