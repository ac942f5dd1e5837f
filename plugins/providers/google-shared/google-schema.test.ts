import test from 'ava';
import { cleanGeminiSchema, geminiParameters, MAX_NODES } from './google-schema.js';

test('OpenAI strict-mode schema: additionalProperties, strict and $schema dropped, nullable type arrays folded', (t) => {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    additionalProperties: false,
    strict: true,
    properties: {
      city: { type: 'string', description: 'City name' },
      unit: { type: ['string', 'null'], enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer', minimum: 1, maximum: 7, exclusiveMaximum: 8 },
    },
    required: ['city', 'unit', 'days'],
  };
  t.deepEqual(cleanGeminiSchema(schema), {
    type: 'object',
    properties: {
      city: { type: 'string', description: 'City name' },
      unit: { type: 'string', nullable: true, enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer', minimum: 1, maximum: 7 },
    },
    required: ['city', 'unit', 'days'],
  });
});

test('$ref to $defs and definitions is inlined, recursion is cut, and the definitions are dropped', (t) => {
  const schema = {
    type: 'object',
    $defs: {
      address: { type: 'object', properties: { street: { type: 'string' }, zip: { $ref: '#/definitions/zip' } }, required: ['street'], additionalProperties: false },
      node: { type: 'object', properties: { value: { type: 'number' }, next: { $ref: '#/$defs/node' } } },
    },
    definitions: { zip: { type: 'string', pattern: '^[0-9]{5}$' } },
    properties: {
      home: { $ref: '#/$defs/address', description: 'Home address' },
      list: { $ref: '#/$defs/node' },
    },
  };
  t.deepEqual(cleanGeminiSchema(schema), {
    type: 'object',
    properties: {
      home: {
        type: 'object',
        properties: { street: { type: 'string' }, zip: { type: 'string', pattern: '^[0-9]{5}$' } },
        required: ['street'],
        description: 'Home address',
      },
      list: {
        type: 'object',
        properties: { value: { type: 'number' }, next: { type: 'object', description: 'A nested value (its recursive schema was cut for the provider).' } },
      },
    },
  });
});

test('anyOf/oneOf with null become nullable, const becomes an enum, allOf is merged, unsupported formats are dropped', (t) => {
  t.deepEqual(cleanGeminiSchema({ anyOf: [{ type: 'string', format: 'email' }, { type: 'null' }] }), { type: 'string', nullable: true });
  t.deepEqual(cleanGeminiSchema({ oneOf: [{ type: 'string' }, { type: 'number', format: 'double' }] }), { anyOf: [{ type: 'string' }, { type: 'number', format: 'double' }] });
  t.deepEqual(cleanGeminiSchema({ const: 'fixed' }), { enum: ['fixed'], type: 'string' });
  t.deepEqual(cleanGeminiSchema({ type: 'string', format: 'date-time' }), { type: 'string', format: 'date-time' });
  t.deepEqual(cleanGeminiSchema({ type: 'integer', enum: [1, 2, 3] }), { type: 'integer' });
  t.deepEqual(cleanGeminiSchema({ type: ['string', 'null'], enum: ['c', 'f', null] }), { type: 'string', nullable: true, enum: ['c', 'f'] });
  t.deepEqual(
    cleanGeminiSchema({
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { properties: { b: { type: 'boolean' } }, required: ['b', 'missing'] },
      ],
    }),
    { type: 'object', properties: { a: { type: 'string' }, b: { type: 'boolean' } }, required: ['a', 'b'] },
  );
  t.deepEqual(cleanGeminiSchema({ type: ['string', 'integer'] }), { anyOf: [{ type: 'string' }, { type: 'integer' }] });
});

test('arrays keep their item schema; empty objects lose empty properties; an empty function takes no parameters', (t) => {
  t.deepEqual(cleanGeminiSchema({ type: 'array', items: { type: 'object', properties: { x: { type: 'number' } }, additionalProperties: false }, minItems: 1 }), {
    type: 'array',
    items: { type: 'object', properties: { x: { type: 'number' } } },
    minItems: 1,
  });
  t.deepEqual(cleanGeminiSchema({ type: 'object', properties: {}, required: [] }), { type: 'object' });
  t.is(geminiParameters({ type: 'object', properties: {}, additionalProperties: false }), undefined);
  t.is(geminiParameters(undefined), undefined);
  t.deepEqual(geminiParameters({ type: 'object', properties: { q: {} } }), { type: 'object', properties: { q: { type: 'string' } } });
});

test('unresolvable references and odd values do not throw', (t) => {
  t.deepEqual(cleanGeminiSchema({ $ref: 'https://example.com/schema.json' }), { type: 'object', description: 'A nested value (its recursive schema was cut for the provider).' });
  t.deepEqual(cleanGeminiSchema('nonsense'), {});
  t.deepEqual(cleanGeminiSchema({ type: 'object', properties: { a: 'nonsense' } }), { type: 'object', properties: { a: {} } });
});

/** Schema nodes in a cleaned schema (every object value counts). */
function countNodes(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, entry) => sum + countNodes(entry), 0);
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Object.values(value).reduce((sum: number, entry) => sum + countNodes(entry), 0);
}

test('definitions that each point twice to the next are expanded to a bounded size, not exponentially', (t) => {
  const $defs: Record<string, unknown> = {};
  for (let level = 0; level < 20; level += 1) {
    const next = level === 19 ? { type: 'string' } : { $ref: `#/$defs/d${level + 1}` };
    $defs[`d${level}`] = { type: 'object', properties: { left: next, right: next } };
  }
  const schema = { type: 'object', $defs, properties: { root: { $ref: '#/$defs/d0' } } };
  t.true(JSON.stringify(schema).length < 2500);
  const cleaned = cleanGeminiSchema(schema);
  const nodes = countNodes(cleaned);
  // Without a cap this is 2^21 nodes; with it, at most MAX_NODES schemas plus their `properties` maps.
  t.true(nodes <= 2 * MAX_NODES + 1, `${nodes} nodes`);
  t.true(nodes > 100);
  // The top stays intact; the deep end is cut to a plain object.
  const root = (cleaned.properties as Record<string, { type: string; properties: Record<string, unknown> }>).root;
  t.is(root.type, 'object');
  t.deepEqual(Object.keys(root.properties), ['left', 'right']);
  t.true(JSON.stringify(cleaned).includes('"description":"A nested value'));
});

test('allOf parts that each reference the next twice are bounded too', (t) => {
  const $defs: Record<string, unknown> = {};
  for (let level = 0; level < 24; level += 1) {
    $defs[`d${level}`] = level === 23 ? { properties: { [`p${level}`]: { type: 'string' } } } : { allOf: [{ $ref: `#/$defs/d${level + 1}` }, { $ref: `#/$defs/d${level + 1}` }] };
  }
  const cleaned = cleanGeminiSchema({ $defs, $ref: '#/$defs/d0' });
  t.true(countNodes(cleaned) <= 2 * MAX_NODES + 1);
});

test('a $ref with a malformed percent escape is cut, not thrown', (t) => {
  t.notThrows(() => cleanGeminiSchema({ type: 'object', properties: { a: { $ref: '#/%E0' } } }));
  t.deepEqual(cleanGeminiSchema({ type: 'object', properties: { a: { $ref: '#/%E0' } } }), {
    type: 'object',
    properties: { a: { type: 'object', description: 'A nested value (its recursive schema was cut for the provider).' } },
  });
});
