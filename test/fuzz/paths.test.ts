import test from 'ava';
import fc from 'fast-check';
import { GOOD_HEADERS } from './arbitraries.js';
import { type FuzzAnswer, type FuzzRequest, fuzzSuite, notAClientError } from './fuzz-setup.js';

const suite = fuzzSuite(test);

/** Text as a Node client sends it in a request line: a UTF-8 string becomes its bytes, one latin1 character each. */
const asWireText = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

const plainSegment = fc.stringMatching(/^[A-Za-z0-9_~-]{1,12}$/);
/** Path segments that are odd but hold no dot segment, encoded slash or backslash. */
const oddSegment = fc.oneof(
  { weight: 4, arbitrary: plainSegment },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }).map((text) => encodeURIComponent(text)) },
  { weight: 2, arbitrary: fc.constantFrom('!', "$&'()*+,;=:@", '|', '^', '[', ']', '{', '}', '`', '"', '<', '>', '~', '...', '.a', 'a.', '%25', '%252e', '%252f', '%00', '%0a', '%0d%0a', '%20', '%7f', '%ff', '%c0%ae', '%e2%80%ae', 'x%', '%zz', '%4', '%E0%A4%A', '%u002e', '@', ':', 'a:b', 'v1') },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 6000 }).map((length) => 'a'.repeat(length)) },
);
/** A `.`/`..` segment (raw or percent-encoded), an encoded slash or backslash, or a raw backslash. */
const traversalSegment = fc.oneof(
  fc.constantFrom('.', '..', '%2e', '%2E', '%2e%2e', '%2E%2e', '.%2e', '%2e.', '.%2E'),
  fc.tuple(fc.constantFrom('%2f', '%2F', '%5c', '%5C', '\\'), plainSegment, plainSegment).map(([escape, before, after]) => `${before}${escape}${after}`),
  fc.constantFrom('%2f', '%5c', '..%2f..', '%2e%2e%5c', '\\..\\'),
);
const query = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.webQueryParameters().map((text) => `?${text}`) },
  { weight: 1, arbitrary: fc.constantFrom('?', '??', '?a=%zz', '?%00=1', '?a=1&a=2', '?limit=-1') },
);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS');

function passthroughRequest(verb: string, path: string): FuzzRequest {
  const body = verb === 'POST' || verb === 'PUT' ? Buffer.from('{"fuzz":true}') : undefined;
  return { method: verb, path, headers: body ? { ...GOOD_HEADERS, 'content-type': 'application/json' } : { ...GOOD_HEADERS }, body };
}

/** Under /v1/: one to six odd segments, sometimes an empty one or a trailing slash; elsewhere: prefixes that are almost /v1/. */
const oddPath = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(fc.array(oddSegment, { minLength: 1, maxLength: 6 }), fc.constantFrom('', '/', '//'), query).map(([segments, end, search]) => `/v1/${segments.join('/')}${end}${search}`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('/v1', '/V1/', '/%76%31/', '/v1%2f', '//v1/', '/v2/', '/', '/admin/x/', '/v1/../', '/./v1/', '/%2e/v1/'), fc.array(oddSegment, { maxLength: 3 }), query)
      .map(([prefix, segments, search]) => `${prefix}${segments.join('/')}${search}`)
      // `GET /` is not odd: it redirects to the dashboard (302).
      .filter((path) => !/^\/(\?|$)/.test(path)) },
);
/** A path under /v1/ with at least one traversal piece among ordinary segments. */
const traversalPath = fc
  .tuple(fc.array(plainSegment, { maxLength: 3 }), traversalSegment, fc.array(fc.oneof(plainSegment, traversalSegment), { maxLength: 3 }), query)
  .map(([before, bad, after, search]) => `/v1/${[...before, bad, ...after].join('/')}${search}`);

const invalidPath = (answer: FuzzAnswer): string | undefined => {
  const problem = notAClientError(answer);
  if (problem) return problem;
  if (answer.status !== 400) return `status ${answer.status}, expected 400 invalid_path`;
  const code = JSON.parse(answer.text).error.code;
  return code === 'invalid_path' ? undefined : `code ${JSON.stringify(code)}, expected "invalid_path"`;
};

/**
 * Requests that are not HTTP/1.1 as Node's parser reads it: raw non-ASCII bytes (UTF-8 sent
 * unencoded) or DEL in the request target, or more than 16 KB of headers. The server's
 * `clientError` handler answers them before any route runs.
 */
const rawBytesPath = fc
  .tuple(fc.array(plainSegment, { maxLength: 2 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }), fc.constantFrom('\x80', '\xff', '\x7f'))
  .map(([segments, text, last]) => `/v1/${[...segments, `${asWireText(text).replace(/[\x00-\x20/?#\\]/g, '')}${last}`].join('/')}`);
const notHttpRequest = fc.oneof(
  fc.tuple(method, rawBytesPath).map(([verb, path]) => passthroughRequest(verb, path)),
  fc.tuple(method, fc.integer({ min: 17_000, max: 40_000 }), fc.constantFrom('/v1/models', '/v1/chat/completions', '/admin/logs', '/health')).map(([verb, size, path]) => {
    const request = passthroughRequest(verb, path);
    return { ...request, headers: { ...request.headers, 'x-padding': 'p'.repeat(size) } };
  }),
);

suite.property('requests that are not valid HTTP/1.1 are answered with an OpenAI-shaped 4xx', () => notHttpRequest, { runs: 150 });

suite.property('odd request paths are answered with an OpenAI-shaped 4xx', () => fc.tuple(method, oddPath).map(([verb, path]) => passthroughRequest(verb, path)), { runs: 900, batches: 2 });

suite.property('dot segments, encoded slashes and backslashes are refused with 400 invalid_path', () => fc.tuple(method, traversalPath).map(([verb, path]) => passthroughRequest(verb, path)), {
  runs: 400,
  check: invalidPath,
});
