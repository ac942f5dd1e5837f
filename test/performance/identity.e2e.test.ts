// Regression guards for the hot path (issue 9), without timing anything: what needs no change is
// not serialised again. A re-serialised body would lose the fake's deliberate formatting (spaces,
// line breaks, key order), so byte equality proves each shortcut is taken.
import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { gatewayHeaders, startGateway, type TestGateway, traceId } from '../harness.js';

const ANSWER = {
  id: 'chatcmpl-identity',
  object: 'chat.completion',
  created: 1_763_683_200,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
  system_fingerprint: 'fp_identity',
};
/** Formatted as no JSON.stringify call of the gateway would format it. */
const ANSWER_BYTES = `${JSON.stringify(ANSWER, null, 3)}\n`;
const REQUEST_BYTES = '{ "messages" : [ { "content" : "Hi there", "role" : "user" } ],\n  "model" : "gpt-4o-mini" }';

let fake: Fake;
let gateway: TestGateway;
let extraField = false;

test.before(async () => {
  fake = await startFake((_request, response) => {
    const body = extraField ? JSON.stringify({ ...ANSWER, provider_extra: { region: 'x' } }, null, 3) : ANSWER_BYTES;
    response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  gateway = await startGateway();
});
test.after.always(async () => {
  await gateway.close();
  await fake.close();
});

async function post(trace: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...gatewayHeaders(fake.baseUrl), 'content-type': 'application/json', 'x-gateway-trace-id': trace, ...headers },
    body: REQUEST_BYTES,
  });
  return { status: answer.status, text: await answer.text() };
}

async function storedResponseBody(trace: string): Promise<string | null | undefined> {
  await gateway.gateway.flushLogs();
  const page = await gateway.gateway.logStore.list({ limit: 5, traceId: trace });
  const record = page.data[0] && (await gateway.gateway.logStore.get(page.data[0].id));
  return record?.response_body;
}

test.serial('an OpenAI request and answer that need no change travel as the bytes received, both ways and into the log', async (t) => {
  extraField = false;
  const trace = traceId('identity');
  const answer = await post(trace);
  t.is(answer.status, 200);
  t.is(fake.requests.at(-1)!.body.toString('utf8'), REQUEST_BYTES, 'the upstream got the client bytes, not a re-serialisation');
  t.is(answer.text, ANSWER_BYTES, 'the client got the upstream bytes, not a re-serialisation');
  t.is(await storedResponseBody(trace), ANSWER_BYTES, 'the log stored the same bytes without serialising the answer again');
});

test.serial('an answer with a field outside the schema is still stripped (strict compliance) and then serialised', async (t) => {
  extraField = true;
  const trace = traceId('identity-strict');
  const answer = await post(trace);
  t.is(answer.status, 200);
  t.deepEqual(JSON.parse(answer.text), ANSWER, 'the extra field is gone');
  t.false(answer.text.includes('\n'), 'a changed answer is serialised by the gateway');
  const relaxed = await post(traceId('identity-relaxed'), { 'x-gateway-strict-api-compliance': 'false' });
  t.is(JSON.parse(relaxed.text).provider_extra.region, 'x', 'without strict compliance the extra field stays');
});
