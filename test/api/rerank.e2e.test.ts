import type { ServerResponse } from 'node:http';
import test from 'ava';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, loggedOnce, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { cohere } from '../../plugins/providers/cohere/index.js';
import { jina } from '../../plugins/providers/jina/index.js';
import { voyage } from '../../plugins/providers/voyage/index.js';

const DOCUMENTS = ['Carson City is the capital city of Nevada.', 'Saipan is the capital of the Northern Mariana Islands.', 'Washington, D.C. is the capital of the United States.', { text: 'Capital punishment is legal in 30 states.', source: 'wiki' }];
/** One score per document, in their order: best first they are 2, 3, 0, 1. */
const SCORES = [0.32713068, 0.1867867, 0.999071, 0.7867867];

let fake: Fake;
let gateway: TestGateway;

const json = (response: ServerResponse, status: number, body: unknown): void => {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

/** Cohere v2 at `/v2/rerank`, Jina at `/v1/rerank` (results in the documents' order, documents echoed), Voyage's shape when asked for it. */
function upstream(request: RecordedRequest, response: ServerResponse) {
  const body = request.json();
  if (request.url === '/v2/rerank') {
    return json(response, 200, {
      id: 'rr-1',
      results: SCORES.map((relevance_score, index) => ({ index, relevance_score })),
      meta: { api_version: { version: '2', is_experimental: false }, billed_units: { search_units: 1 } },
    });
  }
  if (request.url === '/v1/rerank' && request.headers['x-test-shape'] === 'voyage') {
    return json(response, 200, { object: 'list', data: SCORES.map((relevance_score, index) => ({ index, relevance_score })), model: body.model, usage: { total_tokens: 150 } });
  }
  if (request.url === '/v1/rerank') {
    const results = (body.documents as string[]).map((text, index) => ({ index, relevance_score: SCORES[index], document: { text } }));
    return json(response, 200, { model: body.model, usage: { total_tokens: 815, prompt_tokens: 815 }, results, provider_extra: 1 });
  }
  if (request.url === '/failing/rerank') return json(response, 500, { detail: 'reranker down' });
  json(response, 404, { error: { message: 'no such route' } });
}

test.before(async () => {
  fake = await startFake(upstream);
  gateway = await startGateway({
    providers: [openai(), cohere(), jina(), voyage()],
    pricing: {
      models: {
        cohere: { 'rerank-v3.5': { input: 0, output: 0, searches: 2 } },
        jina: { 'jina-reranker-v2-base-multilingual': { input: 0.02, output: 0 } },
      },
    },
    cache: { default: { mode: 'simple', max_age: 600 } },
    models: {
      // A rerank alias: Jina first (its answer here is a 500), Cohere when it fails.
      'best-reranker': {
        strategy: { mode: 'fallback' },
        targets: [
          { name: 'jina', provider: 'jina', custom_host: `${fake.origin}/failing`, override_params: { model: 'jina-reranker-v2-base-multilingual' } },
          { name: 'cohere', provider: 'cohere', custom_host: `${fake.origin}/v2`, override_params: { model: 'rerank-v3.5' } },
        ],
      },
    },
  });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

async function rerank(provider: string, body: Record<string, unknown>, label: string, headers: Record<string, string> = {}) {
  const trace = traceId(label);
  const customHost = provider === 'cohere' ? `${fake.origin}/v2` : fake.baseUrl;
  const response = await fetch(`${gateway.url}/v1/rerank`, {
    method: 'POST',
    headers: {
      'x-gateway-api-key': ACCOUNT_KEY,
      'x-gateway-provider': provider,
      'x-gateway-custom-host': customHost,
      'x-gateway-trace-id': trace,
      authorization: `Bearer ${PROVIDER_KEY}`,
      'content-type': 'application/json',
      'x-gateway-forward-headers': 'x-test-trace, x-test-shape',
      'x-test-trace': trace,
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, json: (await response.json()) as any, trace };
}

const sent = (trace: string) => fake.requests.filter((request) => request.headers['x-test-trace'] === trace);

test('Cohere: Rerank v2 gets the texts, the answer is best first, top_n of them, with the documents as sent; priced per search unit and logged', async (t) => {
  const { status, json: answer, trace } = await rerank('cohere', { model: 'rerank-v3.5', query: 'What is the capital of the United States?', documents: DOCUMENTS, top_n: 3, return_documents: true, max_tokens_per_doc: 512 }, 'rr-cohere');
  t.is(status, 200);
  const [request] = sent(trace);
  t.is(request.url, '/v2/rerank');
  t.deepEqual(request.json(), { model: 'rerank-v3.5', query: 'What is the capital of the United States?', documents: DOCUMENTS.map((document) => (typeof document === 'string' ? document : document.text)), top_n: 3, max_tokens_per_doc: 512 });
  t.deepEqual(answer, {
    id: 'rr-1',
    model: 'rerank-v3.5',
    results: [
      { index: 2, relevance_score: 0.999071, document: { text: DOCUMENTS[2] } },
      { index: 3, relevance_score: 0.7867867, document: DOCUMENTS[3] },
      { index: 0, relevance_score: 0.32713068, document: { text: DOCUMENTS[0] } },
    ],
    usage: { search_units: 1 },
  });
  const entry = await loggedOnce(gateway, trace);
  t.like(entry, { operation: 'rerank', provider: 'cohere', model: 'rerank-v3.5', status: 200, outcome: 'ok' });
  t.deepEqual(entry.units, { requests: 1, searches: 1 });
  t.is(entry.costUsd, 0.002, 'one search unit at $2 per thousand');
});

test('Jina: tokens priced per million; no document unless asked, whatever the provider echoed; strict answers drop the provider extras', async (t) => {
  const { status, json: answer, trace } = await rerank('jina', { model: 'jina-reranker-v2-base-multilingual', query: 'capital', documents: DOCUMENTS, return_documents: false }, 'rr-jina');
  t.is(status, 200);
  const upstreamBody = sent(trace)[0].json();
  t.false('return_documents' in upstreamBody, 'the gateway adds the documents itself');
  t.deepEqual(
    answer.results.map((result: Record<string, unknown>) => result.index),
    [2, 3, 0, 1],
  );
  t.true(answer.results.every((result: object) => !('document' in result)));
  t.false('provider_extra' in answer);
  t.deepEqual(answer.usage, { prompt_tokens: 815, total_tokens: 815 });
  const entry = await loggedOnce(gateway, trace);
  t.deepEqual(entry.usage, { promptTokens: 815, completionTokens: 0, totalTokens: 815 });
  t.is(entry.costUsd, 0.0000163);

  const loose = await rerank('jina', { model: 'jina-reranker-v2-base-multilingual', query: 'capital', documents: DOCUMENTS }, 'rr-jina-loose', { 'x-gateway-strict-api-compliance': 'false' });
  t.is(loose.json.provider_extra, 1, 'not strict: the provider extras stay');
});

test("Voyage: top_n goes up as top_k and the answer's data become results", async (t) => {
  const { status, json: answer, trace } = await rerank('voyage', { model: 'rerank-2.5', query: 'capital', documents: DOCUMENTS, top_n: 1 }, 'rr-voyage', { 'x-test-shape': 'voyage' });
  t.is(status, 200);
  const upstreamBody = sent(trace)[0].json();
  t.is(upstreamBody.top_k, 1);
  t.false('top_n' in upstreamBody);
  t.deepEqual(answer.results, [{ index: 2, relevance_score: 0.999071 }]);
  t.deepEqual(answer.usage, { prompt_tokens: 150, total_tokens: 150 });
});

test('a provider without rerank answers 400 naming it, and nothing goes upstream', async (t) => {
  const { status, json: answer, trace } = await rerank('openai', { model: 'rerank-v3.5', query: 'q', documents: ['a'] }, 'rr-openai');
  t.is(status, 400);
  t.is(answer.error.code, 'unsupported_operation');
  t.is(answer.error.param, 'x-gateway-provider');
  t.regex(answer.error.message, /"openai" does not support the operation "rerank"/);
  t.is(sent(trace).length, 0);
  const entry = await loggedOnce(gateway, trace);
  t.like(entry, { operation: 'rerank', status: 400 });
});

test('invalid requests are refused with the field named, before anything is sent', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ model: 'm', documents: ['a'] }, 'query'],
    [{ model: 'm', query: '', documents: ['a'] }, 'query'],
    [{ model: 'm', query: 'q' }, 'documents'],
    [{ model: 'm', query: 'q', documents: [] }, 'documents'],
    [{ model: 'm', query: 'q', documents: ['a', 7] }, 'documents[1]'],
    [{ model: 'm', query: 'q', documents: [{ title: 'no text' }] }, 'documents[0].text'],
    [{ model: 'm', query: 'q', documents: ['a'], top_n: 0 }, 'top_n'],
    [{ model: 'm', query: 'q', documents: ['a'], return_documents: 'yes' }, 'return_documents'],
    [{ query: 'q', documents: ['a'] }, 'model'],
  ];
  for (const [body, param] of cases) {
    const { status, json: answer, trace } = await rerank('cohere', body, 'rr-invalid');
    t.is(status, 400, JSON.stringify(body));
    t.is(answer.error.param, param, JSON.stringify(body));
    t.is(sent(trace).length, 0);
  }
});

test('the response cache serves the same rerank again without calling the provider', async (t) => {
  const body = { model: 'rerank-v3.5', query: 'cache me', documents: ['one', 'two', 'three', 'four'], top_n: 2 };
  // Forwarded headers are part of what identifies an answer: none here.
  const unforwarded = { 'x-gateway-forward-headers': '', 'x-test-trace': '' };
  const first = await rerank('cohere', body, 'rr-cache-1', unforwarded);
  const second = await rerank('cohere', body, 'rr-cache-2', unforwarded);
  t.is(first.headers.get('x-gateway-cache'), 'MISS');
  t.is(second.headers.get('x-gateway-cache'), 'HIT');
  t.deepEqual(second.json, first.json);
  t.is(fake.requests.filter((request) => request.json().query === 'cache me').length, 1, 'the provider was called once');
  const hit = await loggedOnce(gateway, second.trace);
  t.is(hit.cache?.status, 'HIT');
  const documented = await rerank('cohere', { ...body, return_documents: true }, 'rr-cache-3', unforwarded);
  t.is(documented.headers.get('x-gateway-cache'), 'MISS', 'asking for the documents is another answer');
  t.deepEqual(documented.json.results[0].document, { text: 'three' });
});

test.serial('a virtual key with a budget: a rerank priced per search is admitted, charged the searches the provider billed; an unpriced rerank model is refused before anything is sent', async (t) => {
  const { id, key } = await createKey(t, gateway, {
    name: 'rerank-budget',
    provider: 'cohere',
    provider_key: 'co-rerank-secret-0123456789abcdef',
    custom_host: `${fake.origin}/v2`,
    limits: { budget_usd: 1 },
  });
  const call = (model: string) =>
    fetch(`${gateway.url}/v1/rerank`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model, query: 'budget', documents: ['a', 'b', 'c', 'd'] }),
    });
  const priced = await call('rerank-v3.5');
  t.is(priced.status, 200);
  const deadline = Date.now() + 5000;
  let usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
  while (usage.reserved_usd !== 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
  }
  t.is(usage.remaining_usd, 0.998, 'one search unit at $2 per thousand was charged');
  const before = fake.requests.length;
  const unpriced = await call('rerank-unknown-model');
  t.is(unpriced.status, 403);
  t.is(((await unpriced.json()) as { error: { code: string } }).error.code, 'model_not_priced');
  t.is(fake.requests.length, before, 'nothing was sent upstream');
});

test('a rerank alias routes like any operation: the failing first target falls back to the next, whose model override is sent', async (t) => {
  const trace = traceId('rr-alias');
  const response = await fetch(`${gateway.url}/v1/rerank`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, authorization: `Bearer ${PROVIDER_KEY}`, 'content-type': 'application/json', 'x-gateway-trace-id': trace, 'x-gateway-cache': 'no-store' },
    body: JSON.stringify({ model: 'best-reranker', query: 'alias', documents: ['one', 'two', 'three', 'four'], top_n: 1 }),
  });
  t.is(response.status, 200, await response.clone().text());
  t.is(response.headers.get('x-gateway-route-target'), 'cohere');
  t.deepEqual(((await response.json()) as { results: unknown[] }).results, [{ index: 2, relevance_score: 0.999071 }]);
  const sent = fake.requests.filter((request) => request.url === '/v2/rerank' && request.json().query === 'alias');
  t.is(sent.length, 1);
  t.is(sent[0].json().model, 'rerank-v3.5');
  const entry = await loggedOnce(gateway, trace);
  t.like(entry, { operation: 'rerank', status: 200 });
});
