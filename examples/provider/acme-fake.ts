import type { ProviderFakeRenderer, ReceivedRequest, RenderedAnswer } from '../../core/spec/index.js';
import type { AcmeAnswer, AcmeRequest } from './acme-chat.js';

/**
 * A fake of Acme's API for the conformance kit: it answers each scenario the way Acme's
 * documentation says Acme does. Pure: a request in, an answer out.
 */
const json = (status: number, body: unknown, headers: Record<string, string> = {}): RenderedAnswer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  chunks: [JSON.stringify(body)],
});
const sse = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const split = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, index) => text.slice(index * size, (index + 1) * size));
const parse = (request: ReceivedRequest) => JSON.parse(request.body.toString('utf8')) as AcmeRequest;

export const acmeFake: ProviderFakeRenderer = {
  classify(request) {
    if (!request.url.endsWith('/v2/generate')) return { operation: 'other', stream: false };
    return { operation: 'chat', stream: parse(request).stream === true };
  },

  render(scenario, request, stream) {
    if (scenario.kind === 'error') {
      const headers: Record<string, string> = scenario.retryAfter ? { 'retry-after': scenario.retryAfter } : {};
      return json(scenario.status, { fault: { reason: scenario.message, kind: `status_${scenario.status}` } }, headers);
    }
    const body = parse(request);
    if (typeof body.limit !== 'number') return json(400, { fault: { reason: 'limit is required', kind: 'bad_request' } });
    if (scenario.kind === 'text' || scenario.kind === 'toolCall') {
      const tokens = { in: scenario.usage.promptTokens, out: scenario.usage.completionTokens };
      const call = scenario.kind === 'toolCall' ? { id: scenario.id, name: scenario.name, input: JSON.parse(scenario.arguments) as unknown } : undefined;
      const end: AcmeAnswer['end'] = scenario.kind === 'toolCall' ? 'call' : scenario.finishReason === 'length' ? 'limit' : 'done';
      if (!stream) {
        const output = call ? { text: '', calls: [call] } : { text: scenario.kind === 'text' ? scenario.text : '' };
        return json(200, { id: 'gen_1', model: body.model, output, end, tokens } satisfies AcmeAnswer);
      }
      const events =
        scenario.kind === 'toolCall'
          ? [sse('call', { id: scenario.id, name: scenario.name }), ...split(scenario.arguments, 6).map((partial) => sse('call_input', { partial }))]
          : split(scenario.text, 5).map((delta) => sse('text', { delta }));
      return { status: 200, headers: { 'content-type': 'text/event-stream' }, chunks: [...events, sse('end', { end, tokens })] };
    }
    if (scenario.kind === 'truncated') {
      return { status: 200, headers: { 'content-type': 'text/event-stream' }, chunks: split(scenario.text, 5).map((delta) => sse('text', { delta })) };
    }
    return json(404, { fault: { reason: 'Acme has no embeddings', kind: 'not_found' } });
  },

  checkAuth(request, credential) {
    const problems: string[] = [];
    if (request.headers['x-acme-key'] !== credential) problems.push('expected the key in "x-acme-key"');
    if (request.headers.authorization !== undefined) problems.push('Acme takes no authorization header');
    return problems;
  },

  roles(request) {
    const body = parse(request);
    const speakers = { user: 'user', model: 'assistant', tool: 'tool' } as const;
    return [...(body.system !== undefined ? ['system'] : []), ...body.turns.map((turn) => speakers[turn.speaker])];
  },

  stopSequences: (request) => parse(request).stop_at ?? [],
};
