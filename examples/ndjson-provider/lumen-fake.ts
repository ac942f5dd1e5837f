import { type ProviderFakeRenderer, type RenderedAnswer, requestJson, splitText } from '../../core/spec/provider/index.js';
import type { LumenAnswer, LumenRequest } from './lumen-chat.js';

/**
 * A fake of Lumen's API for the conformance kit: it answers each scenario the way Lumen's
 * documentation says Lumen does. Pure: a request in, an answer out.
 */
const json = (status: number, body: unknown, headers: Record<string, string> = {}): RenderedAnswer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  chunks: [JSON.stringify(body)],
});
/** One NDJSON line, cut in two writes so that a line split across reads is exercised. */
const line = (value: unknown): string[] => {
  const text = `${JSON.stringify(value)}\n`;
  return [text.slice(0, 9), text.slice(9)];
};
const ndjson = (lines: unknown[]): RenderedAnswer => ({ status: 200, headers: { 'content-type': 'application/x-ndjson' }, chunks: lines.flatMap(line) });

export const lumenFake: ProviderFakeRenderer = {
  classify(request) {
    if (!request.url.endsWith('/v1/generate')) return { operation: 'other', stream: false };
    return { operation: 'chat', stream: (requestJson(request) as LumenRequest).stream === true };
  },

  render(scenario, request, stream) {
    if (scenario.kind === 'error') {
      const headers: Record<string, string> = scenario.retryAfter ? { 'retry-after': scenario.retryAfter } : {};
      return json(scenario.status, { error: { message: scenario.message, code: `status_${scenario.status}` } }, headers);
    }
    const body = requestJson(request) as LumenRequest;
    if (scenario.kind === 'text' || scenario.kind === 'toolCall') {
      const usage = { input: scenario.usage.promptTokens, output: scenario.usage.completionTokens };
      const call = scenario.kind === 'toolCall' ? { id: scenario.id, name: scenario.name, arguments: JSON.parse(scenario.arguments) as Record<string, unknown> } : undefined;
      const reason: LumenAnswer['stop_reason'] = call ? 'tool_use' : scenario.kind === 'text' && scenario.finishReason === 'length' ? 'max_output' : 'end';
      if (!stream) {
        const answer: LumenAnswer = { id: 'gen_1', model: body.model, text: call ? '' : scenario.kind === 'text' ? scenario.text : '', stop_reason: reason, usage };
        return json(200, call ? { ...answer, calls: [call] } : answer);
      }
      const pieces =
        scenario.kind === 'toolCall'
          ? [{ type: 'call', id: scenario.id, name: scenario.name }, ...splitText(scenario.arguments, 4).map((text) => ({ type: 'arguments', text }))]
          : splitText(scenario.text, 4).map((text) => ({ type: 'text', text }));
      return ndjson([{ type: 'start', id: 'gen_1' }, ...pieces, { type: 'done', stop_reason: reason, usage }]);
    }
    if (scenario.kind === 'truncated') return ndjson([{ type: 'start', id: 'gen_1' }, ...splitText(scenario.text, 4).map((text) => ({ type: 'text', text }))]);
    return json(404, { error: { message: 'Lumen has no embeddings', code: 'not_found' } });
  },

  checkAuth(request, credential) {
    return request.headers.authorization === `Key ${credential}` ? [] : ['expected the key as "authorization: Key <key>"'];
  },

  roles(request) {
    const body = requestJson(request) as LumenRequest;
    const roles = { user: 'user', bot: 'assistant', tool: 'tool' } as const;
    return [...(body.instructions !== undefined ? ['system'] : []), ...(body.messages ?? []).map((message) => roles[message.from])];
  },

  stopSequences: (request) => (requestJson(request) as LumenRequest).stop ?? [],
};
