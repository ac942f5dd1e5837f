import test from 'ava';
import { askStream, assertRefused, bootError, judge, longText, policyGateway, streaming } from '../../../test/guardrails/helpers.js';
import { jsonSchema } from './index.js';

const PERSON = { type: 'object', required: ['name', 'age'], properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } } };

test('params: a schema object is required and must compile', (t) => {
  assertRefused(t, jsonSchema({} as never), 'schema');
  assertRefused(t, jsonSchema({ schema: 'object' as never }), '/schema');
  t.regex(bootError(jsonSchema({ schema: { type: 'nonsense' } }))?.message ?? '', /"json-schema".*type must be/);
  t.is(bootError(jsonSchema({ schema: PERSON })), undefined);
});

test('valid documents pass; invalid ones are denied with the failing path (Unicode, empty, very long)', async (t) => {
  const guardrail = jsonSchema({ schema: PERSON });
  t.like(await judge(guardrail, ['{"name":"Żaneta 👩‍🚀","age":31}'], { side: 'output' }), { action: 'allow' });
  t.deepEqual(await judge(guardrail, ['{"name":"Ana","age":-1}'], { side: 'output' }), { action: 'deny', reason: 'answer does not match the schema: /age must be >= 0', flagged: [] });
  t.like(await judge(guardrail, ['{"name":"Ana"}'], { side: 'output' }), { action: 'deny' });
  t.like(await judge(guardrail, [''], { side: 'output' }), { action: 'deny', reason: 'answer is not valid JSON' });
  t.like(await judge(guardrail, [JSON.stringify({ name: longText(400_000), age: 1 })], { side: 'output' }), { action: 'allow' });
});

test('through the gateway: a streamed answer is buffered and judged whole (default wholeAnswer: buffer)', async (t) => {
  const setup = await policyGateway({ output: [jsonSchema({ schema: PERSON })] }, streaming(['{"name":', '"Ana",', '"age":', '"old"}']));
  t.teardown(() => setup.close());
  const denied = await askStream(setup.client, 'person');
  t.deepEqual(denied, { content: '', finishReason: 'content_filter' });
  setup.fake.handle(streaming(['{"name":', '"Ana",', '"age":', '31}']));
  t.deepEqual(await askStream(setup.client, 'person'), { content: '{"name":"Ana","age":31}', finishReason: 'stop' });
});
