import { type Check, type CheckContext, CheckSkipped, expect, routedAs } from './check.js';
import type { ReceivedRequest, RerankScenario } from '../spec/conformance.js';

const show = (value: unknown) => JSON.stringify(value);
const DOCUMENTS = ['The capital of Nevada is Carson City.', 'Washington, D.C. is the capital of the United States.', { text: 'Capital punishment is legal in 30 states.', id: 'doc-3' }];
/** Scores in the documents' order; best first they are documents 1, 2, 0. */
const SCENARIO: RerankScenario = { kind: 'rerank', scores: [0.125, 0.875, 0.5], tokens: 42, searchUnits: 1 };

let traces = 0;

/** Sends a rerank request through the gateway with a raw `fetch` (the `openai` SDK has no rerank). */
async function rerankRequest(context: CheckContext, body: Record<string, unknown>): Promise<{ status: number; json: any; trace: string; requests: ReceivedRequest[] }> {
  const trace = `conformance-rerank-${process.pid}-${++traces}`;
  const before = context.server.received.length;
  const response = await fetch(`${context.gateway.url}/v1/rerank`, {
    method: 'POST',
    headers: { ...context.rawHeaders, 'content-type': 'application/json', 'x-gateway-trace-id': trace },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, json, trace, requests: context.server.received.slice(before) };
}

const rerank: Check = {
  name: 'rerank',
  description: 'rerank answers best first, top_n of them, with the documents as sent when asked, and the usage the provider billed',
  async run(context) {
    if (!context.plugin.operations.rerank) throw new CheckSkipped('the plugin declares no rerank');
    context.server.scenario = SCENARIO;
    const model = context.subject.rerankModel ?? context.subject.model;
    const { status, json, trace, requests } = await rerankRequest(context, { model, query: 'What is the capital of the United States?', documents: DOCUMENTS, top_n: 2, return_documents: true });
    expect(status === 200, `POST /v1/rerank answered HTTP ${status}: ${show(json).slice(0, 300)}`);
    expect(requests.length === 1, `the provider received ${requests.length} requests`);
    const problems = context.subject.fake.checkAuth(requests[0], context.credential);
    expect(problems.length === 0, `the rerank request's credential: ${problems.join('; ')}`);
    const operation = await routedAs(context, trace);
    expect(operation === 'rerank', `POST /v1/rerank ran as ${operation ?? 'nothing'}, not as the rerank operation`);
    const expected = [
      { index: 1, relevance_score: 0.875, document: { text: DOCUMENTS[1] } },
      { index: 2, relevance_score: 0.5, document: DOCUMENTS[2] },
    ];
    expect(show(json.results) === show(expected), `results ${show(json.results)}, expected ${show(expected)}`);
    expect(json.model === model, `model ${show(json.model)}, expected ${show(model)}`);
    const usage = context.subject.rerankUsage ?? 'tokens';
    if (usage === 'tokens') expect(json.usage?.total_tokens === SCENARIO.tokens, `usage ${show(json.usage)}, expected total_tokens ${SCENARIO.tokens}`);
    if (usage === 'search_units') expect(json.usage?.search_units === SCENARIO.searchUnits, `usage ${show(json.usage)}, expected search_units ${SCENARIO.searchUnits}`);

    // Without return_documents, no result carries a document, whatever the provider echoed.
    context.server.scenario = SCENARIO;
    const bare = await rerankRequest(context, { model, query: 'capital', documents: DOCUMENTS });
    expect(bare.status === 200, `the second rerank answered HTTP ${bare.status}`);
    const indices = (bare.json.results ?? []).map((result: { index: number }) => result.index);
    expect(show(indices) === show([1, 2, 0]), `without top_n every document comes back best first: ${show(indices)}`);
    expect((bare.json.results ?? []).every((result: object) => !('document' in result)), `documents came back unasked: ${show(bare.json.results)}`);
  },
};

const rerankUnsupported: Check = {
  name: 'rerank.unsupported',
  description: 'a plugin without rerank answers POST /v1/rerank with a 400 naming it, and nothing is sent upstream',
  async run(context) {
    if (context.plugin.operations.rerank) throw new CheckSkipped('the plugin declares rerank');
    const { status, json, requests } = await rerankRequest(context, { model: context.subject.model, query: 'q', documents: ['a', 'b'] });
    expect(status === 400, `HTTP ${status}, expected 400`);
    expect(json.error?.code === 'unsupported_operation', `code ${show(json.error?.code)}, expected "unsupported_operation"`);
    expect(String(json.error?.message).includes(`"${context.plugin.id}"`), `the message ${show(json.error?.message)} does not name the provider`);
    expect(requests.length === 0, `the provider received ${requests.length} requests`);
  },
};

/** The rerank checks, run after the battery's others. */
export const rerankChecks: readonly Check[] = [rerank, rerankUnsupported];
