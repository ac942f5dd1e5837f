import type { RE2JS } from 're2js';
import { requireDependency } from '../require.js';

/**
 * `$regex` conditions run on RE2JS (the `re2js` package, pure JavaScript, no native build): an
 * automaton engine that matches in time linear in the input, whatever the pattern. V8's own
 * RegExp backtracks: a stored `^([a-z]+-?)+$` and a 27-character metadata value held the event
 * loop, and with it every request, for seconds. RE2 syntax is JavaScript's without lookarounds
 * and backreferences (the features that need backtracking): a route using them is refused when it
 * is stored (400 `invalid_route` naming the `$regex`). Loaded on the first `$regex`, not at start.
 */

/** Longest value a `$regex` is matched against; a longer value never matches (docs/routing.md). */
export const REGEX_INPUT_MAX = 1024;

/** Compiled patterns kept, by their source (routes are few; a bound against a churn of stored ones). */
const CACHE_MAX = 1000;

let engine: typeof RE2JS | undefined;
const compiled = new Map<string, RE2JS | Error>();

const re2 = (): typeof RE2JS => (engine ??= (requireDependency('re2js') as { RE2JS: typeof RE2JS }).RE2JS);

/** The pattern compiled, or the reason RE2 refuses it (a lookaround, a backreference, a syntax error). */
function compile(pattern: string): RE2JS | Error {
  let result = compiled.get(pattern);
  if (result === undefined) {
    try {
      result = re2().compile(pattern);
    } catch (error) {
      result = error instanceof Error ? error : new Error(String(error));
    }
    if (compiled.size >= CACHE_MAX) compiled.delete(compiled.keys().next().value as string);
    compiled.set(pattern, result);
  }
  return result;
}

/** Why a pattern cannot be a `$regex` condition (RE2's message), or undefined when it can. */
export function regexProblem(pattern: string): string | undefined {
  const result = compile(pattern);
  if (!(result instanceof Error)) return undefined;
  // RE2JS prefixes its messages with "error parsing regexp: ".
  return result.message.replace(/^error parsing regexp:\s*/, '');
}

/**
 * Whether `pattern` matches somewhere in `value` (as `RegExp.prototype.test` without flags), in
 * linear time. A value longer than {@link REGEX_INPUT_MAX} and a pattern RE2 refuses (one stored
 * before the check existed) never match.
 */
export function regexMatches(pattern: string, value: string): boolean {
  if (value.length > REGEX_INPUT_MAX) return false;
  const result = compile(pattern);
  return !(result instanceof Error) && result.test(value);
}

/**
 * The `$regex` patterns of a route (stored before patterns were checked for RE2) that RE2 refuses:
 * each with its place in the route (`strategy.conditions[0].query.metadata.tier.$regex`) and why.
 * Such a condition never matches; the gateway warns of them when it starts.
 */
export function refusedPatterns(value: unknown, path = ''): Array<{ readonly param: string; readonly problem: string }> {
  if (typeof value !== 'object' || value === null) return [];
  const found: Array<{ param: string; problem: string }> = [];
  const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((item, index) => [`[${index}]`, item]) : Object.entries(value).map(([key, item]) => [path ? `.${key}` : key, item]);
  for (const [step, item] of entries) {
    const at = `${path}${step}`;
    if (step.endsWith('$regex') && typeof item === 'string') {
      const problem = regexProblem(item);
      if (problem !== undefined) found.push({ param: at, problem });
    } else {
      found.push(...refusedPatterns(item, at));
    }
  }
  return found;
}
