import fc from 'fast-check';
import { ACCOUNT_KEY, PROVIDER_KEY } from '../harness.js';
import { FUZZ_BODY_LIMIT, type FuzzRequest } from './fuzz-setup.js';

/** The headers of a request the gateway accepts: account key, provider `openai`, a provider token. */
export const GOOD_HEADERS: Readonly<Record<string, string>> = {
  'x-gateway-api-key': ACCOUNT_KEY,
  'x-gateway-provider': 'openai',
  authorization: `Bearer ${PROVIDER_KEY}`,
};

/** A JSON request with the good headers and `extra` (a header set to undefined is left out). */
export function jsonRequest(method: string, path: string, body: Buffer | undefined, extra: Record<string, string | undefined> = {}): FuzzRequest {
  const headers: Record<string, string> = { ...GOOD_HEADERS, 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  return { method, path, headers, body };
}

/** Numbers as JSON text that JavaScript reads badly or that no API field accepts. */
export const oddNumberText = fc.constantFrom(
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '0.1e1',
  '123456789012345678901234567890',
  '9007199254740993',
  '-9223372036854775809',
  '18446744073709551616',
  '2.5',
  '-1',
  '0',
  '1e9',
  '4294967297',
  '1.7976931348623157e308',
  '5e-324',
);

/** Any JSON value, a few levels deep, with the edge numbers fast-check knows. */
export const jsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, '', ' ', 0, -1, 1.5, Number.MAX_SAFE_INTEGER, -Number.MAX_VALUE, [], {}, [null], { '': null }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);

/** `{"a":…}` or `[…]` nested `depth` times: bounded, but deep enough to break recursive code. */
export const deepNesting = fc.record({ depth: fc.integer({ min: 50, max: 20_000 }), kind: fc.constantFrom('array', 'object', 'mixed') }).map(({ depth, kind }) => {
  const open = kind === 'array' ? '[' : kind === 'object' ? '{"a":' : '[{"a":';
  const close = kind === 'array' ? ']' : kind === 'object' ? '}' : '}]';
  const levels = kind === 'mixed' ? Math.ceil(depth / 2) : depth;
  return `${open.repeat(levels)}1${close.repeat(levels)}`;
});

/** Text that is not a JSON document. */
export const invalidJsonText = fc.oneof(
  fc.constantFrom('', ' ', '{', '}', '[', '{"model":', '{"model":"x",}', "{'model':'x'}", '{"a":1}{"b":2}', 'NaN', 'Infinity', '{"a":NaN}', '{"a":undefined}', '\uFEFF{}', '/* c */ {}', '{"a":"\\u12"}', '{"a":"\\x41"}', '{"a":01}', 'nul', 'tru', '"unterminated', '\u0000', '{"a":1e}', '{"a":.5}', '{"a":+1}'),
  fc.string({ unit: 'binary', maxLength: 200 }).filter((text) => !isJson(text)),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')).filter((text) => !isJson(text)),
  fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat()).map(([value, at]) => {
    const text = JSON.stringify(value) ?? 'null';
    return text.slice(0, text.length > 1 ? at % text.length : 0) || '{';
  }).filter((text) => !isJson(text)),
);

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** JSON documents that are not objects. */
export const nonObjectJson = fc.oneof(fc.constantFrom('null', 'true', '0', '"x"', '[]', '[{}]', '  42  '), fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }).map((value) => JSON.stringify(value)));

/** Stands for a value written as raw JSON text (numbers JSON.stringify cannot produce, deep nesting). */
const RAW = '\u0000raw\u0000';

/** The JSON text of `body` with the value marked by the RAW placeholder replaced by `raw`. */
function withRaw(body: Record<string, unknown>, raw: string | undefined): string {
  const text = JSON.stringify(body);
  return raw === undefined ? text : text.replace(JSON.stringify(RAW), raw);
}

/** A value to put in a field: any JSON value, an odd number, deep nesting, or a long string. */
const fieldValue: fc.Arbitrary<{ value: unknown; raw?: string }> = fc.oneof(
  { weight: 6, arbitrary: jsonValue.map((value) => ({ value })) },
  { weight: 2, arbitrary: oddNumberText.map((raw) => ({ value: RAW, raw })) },
  { weight: 1, arbitrary: deepNesting.map((raw) => ({ value: RAW, raw })) },
  // Words, not one long run of letters: see docs/testing.md on the embeddings tokenizer.
  { weight: 1, arbitrary: fc.integer({ min: 1, max: (FUZZ_BODY_LIMIT + 4096) / 5 }).map((count) => ({ value: 'fuzz '.repeat(count) })) },
);

/**
 * Bodies built from a valid `base`: one to three top-level fields (known ones or others) replaced
 * by generated values or removed, and sometimes an odd value written as raw JSON text.
 */
export function mutatedBody(base: Record<string, unknown>, fields: readonly string[]): fc.Arbitrary<string> {
  const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fields) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) });
  return fc.array(fc.tuple(key, fc.nat({ max: 9 }), fieldValue), { minLength: 1, maxLength: 3 }).map((changes) => {
    const body: Record<string, unknown> = structuredClone(base);
    let raw: string | undefined;
    for (const [name, roll, { value, raw: rawText }] of changes) {
      if (roll === 0) {
        delete body[name];
      } else if (rawText !== undefined && raw === undefined) {
        body[name] = value;
        raw = rawText;
      } else if (rawText === undefined) {
        body[name] = value;
      }
    }
    return withRaw(body, raw);
  });
}

/** `base` with one or two fields (known ones or others) replaced by generated JSON values or removed. */
export function mutatedObject(base: Record<string, unknown>, fields: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fields) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) });
  return fc.array(fc.tuple(key, fc.nat({ max: 5 }), jsonValue), { minLength: 1, maxLength: 2 }).map((changes) => {
    const object: Record<string, unknown> = structuredClone(base);
    for (const [name, roll, value] of changes) {
      if (roll === 0) delete object[name];
      else object[name] = value;
    }
    return object;
  });
}

/** A body for a JSON operation: not JSON, not an object, or a valid body with broken fields. */
export function jsonBody(base: Record<string, unknown>, fields: readonly string[], nested: fc.Arbitrary<string> = fc.constant(JSON.stringify(base))): fc.Arbitrary<Buffer> {
  return fc
    .oneof(
      { weight: 2, arbitrary: invalidJsonText },
      { weight: 1, arbitrary: nonObjectJson },
      { weight: 1, arbitrary: deepNesting },
      { weight: 6, arbitrary: mutatedBody(base, fields) },
      { weight: 3, arbitrary: nested },
    )
    .map((text) => Buffer.from(text, 'utf8'));
}

/** Content types a JSON operation may be sent with (undefined: no header). */
export const jsonContentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined,
      '',
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'APPLICATION/JSON',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'application/octet-stream',
      'application/json, text/plain',
      '*/*',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((text) => text.replace(/[^\x20-\x7e]/g, '')) },
);

/** Printable ASCII and Latin-1 text a Node client can send as a header value (no control characters). */
export const headerText = (maxLength = 60): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength }).map((text) => text.replace(/[^\x20-\x7e]/g, '')),
    fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((code) => code !== 0x7f).map((code) => String.fromCharCode(code)), maxLength }),
  );
