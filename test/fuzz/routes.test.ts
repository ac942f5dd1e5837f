import test from 'ava';
import fc from 'fast-check';
import { ACCOUNT_KEY } from '../harness.js';
import { type FuzzRequest, type FuzzTarget, fuzzSuite } from './fuzz-setup.js';

// Routing inputs (issue 31, item 6): `$regex` conditions that the gateway cannot match in linear
// time are refused where routes are stored or sent, and catastrophic patterns it does accept never
// stall a request. Every answer is an OpenAI-shaped 4xx.

const suite = fuzzSuite(test);

const headers = (extra: Record<string, string> = {}) => ({ 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json', ...extra });

/** Pattern text RE2 compiles (so that only the construct placed in it makes it bad). */
const plain = fc.stringMatching(/^[a-z0-9 _-]{0,12}$/);

/** A `$regex` the gateway refuses: a lookaround or a backreference, broken syntax, too long, or not a string. */
const badPattern: fc.Arbitrary<unknown> = fc.oneof(
  fc
    .tuple(plain, fc.constantFrom('(?=a)', '(?!a)', '(?<=a)', '(?<!a)', '(a)\\1!', '(?<n>a)\\k<n>', '(x)(y)\\2!', '(', ')', '[a-', 'a{2,1}', 'a**', '(?P<', '[z-a]', '(?i', '\\p{Nope}'), plain)
    .map(([before, construct, after]) => `${before}${construct}${after}`),
  fc.integer({ min: 257, max: 2000 }).map((length) => 'a'.repeat(length)),
  fc.constantFrom<unknown>(42, null, true, [], {}, ['a']),
);

/** Where a bad `$regex` sits in a route: a condition, inside `$and`/`$or`, or in a nested route's condition. */
const routeWith = (pattern: unknown, field: string, place: number): Record<string, unknown> => {
  const query = [{ [field]: { $regex: pattern } }, { $or: [{ model: 'x' }, { [field]: { $regex: pattern } }] }, { $and: [{ [field]: { $regex: pattern } }] }][place % 3];
  const conditional = { strategy: { mode: 'conditional', conditions: [{ query, then: 'a' }], default: 'a' }, targets: [{ name: 'a', provider: 'openai' }] };
  return place >= 3 ? { strategy: { mode: 'fallback' }, targets: [{ name: 'outer', route: conditional }] } : conditional;
};

const field = fc.constantFrom('metadata.tier', 'model', 'user', 'caller.id', 'caller.name');

/** A stored route whose one `$regex` is bad, sent as POST or PUT /admin/routes, or as a model alias. */
const badStoredRoute = fc
  .tuple(badPattern, field, fc.integer({ min: 0, max: 5 }), fc.constantFrom('POST /admin/routes', 'PUT /admin/models/fuzz-alias'))
  .map(([pattern, at, place, where]): FuzzRequest => {
    const [method, path] = where.split(' ');
    const route = routeWith(pattern, at, place);
    const body = method === 'POST' ? { name: `fuzz-${place}`, route } : { route };
    return { method, path, headers: headers(), body: Buffer.from(JSON.stringify(body)) };
  });

/** The catastrophic patterns of a backtracking engine: accepted, and matched in linear time. */
const catastrophic = fc.constantFrom('(a+)+$', '^([a-z]+-?)+$', '(a|aa)+$', '(.*a){12}', '^(\\w+\\s?)*$', '(x+x+)+y', '^(a|a?)+$', '(\\d+)*[a-z]$');
/** A header-safe metadata value: random printable text, or one built to make a backtracking engine explode. */
const adversarialValue = fc.oneof(
  fc.stringMatching(/^[ -~]{0,200}$/),
  fc.tuple(fc.constantFrom('a', 'ab', 'x', 'abcdefgh-', '1', 'word '), fc.integer({ min: 10, max: 80 }), fc.constantFrom('!', 'b', '', '-!', '#')).map(([unit, count, end]) => `${unit.repeat(count)}${end}`.slice(0, 512)),
);

/**
 * An inline route with a catastrophic `$regex` on an adversarial metadata value, and a second rule
 * that never holds: the regex runs on every request and nothing goes upstream (400 `no_route_match`).
 */
const stallAttempt = fc.tuple(catastrophic, adversarialValue).map(([pattern, value]): FuzzRequest => {
  const route = {
    strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tag': { $regex: pattern }, 'metadata.never': 'set' }, then: 'a' }] },
    targets: [{ name: 'a', provider: 'openai', custom_host: 'http://127.0.0.1:9/v1' }],
  };
  return {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: headers({ 'x-gateway-config': JSON.stringify(route), 'x-gateway-metadata': JSON.stringify({ tag: value }), authorization: 'Bearer sk-fuzz' }),
    body: Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })),
  };
});

const routingRequest = (_target: FuzzTarget): fc.Arbitrary<FuzzRequest> => fc.oneof({ weight: 3, arbitrary: badStoredRoute }, { weight: 2, arbitrary: stallAttempt });

suite.property('routes with a bad $regex are refused, and catastrophic patterns never stall a request: an OpenAI-shaped 4xx', routingRequest, { runs: 300, batches: 2 });
