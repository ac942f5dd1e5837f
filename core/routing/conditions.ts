import { isRecord } from '../spec/is-record.js';
import type { Query } from './route.js';
import { regexMatches } from './safe-regex.js';

/** What a conditional route's rules read about a request. */
export interface RequestFacts {
  readonly metadata: Readonly<Record<string, string>>;
  readonly model?: string;
  readonly user?: string;
  readonly callerId?: string;
  readonly callerName?: string;
}

function factOf(facts: RequestFacts, path: string): unknown {
  if (path.startsWith('metadata.')) return facts.metadata[path.slice('metadata.'.length)];
  switch (path) {
    case 'model':
      return facts.model;
    case 'user':
      return facts.user;
    case 'caller.id':
      return facts.callerId;
    case 'caller.name':
      return facts.callerName;
    default:
      return undefined;
  }
}

/** Orders two values as numbers when both read as numbers, else as strings; undefined when either is absent. */
function compare(left: unknown, right: unknown): number | undefined {
  if (left === undefined || left === null) return undefined;
  const a = Number(left);
  const b = Number(right);
  if (Number.isFinite(a) && Number.isFinite(b) && left !== '' && right !== '') return a - b;
  const text = String(left);
  const other = String(right);
  return text < other ? -1 : text > other ? 1 : 0;
}

const equal = (left: unknown, right: unknown): boolean => left === right || (left !== undefined && String(left) === String(right));

function matchOperator(value: unknown, operator: string, operand: unknown): boolean {
  switch (operator) {
    case '$eq':
      return equal(value, operand);
    case '$ne':
      return !equal(value, operand);
    case '$in':
      return (operand as unknown[]).some((item) => equal(value, item));
    case '$nin':
      return !(operand as unknown[]).some((item) => equal(value, item));
    case '$regex':
      return value !== undefined && value !== null && regexMatches(operand as string, String(value));
    case '$gt':
      return (compare(value, operand) ?? 0) > 0 && value !== undefined;
    case '$gte':
      return value !== undefined && (compare(value, operand) ?? -1) >= 0;
    case '$lt':
      return value !== undefined && (compare(value, operand) ?? 0) < 0;
    case '$lte':
      return value !== undefined && (compare(value, operand) ?? 1) <= 0;
    default:
      return false;
  }
}

/**
 * Whether a query (already checked by `parseRoute`) matches the request's facts: every field must
 * hold; `$and` and `$or` combine sub-queries; a plain value means `$eq`.
 */
export function matchQuery(query: Query, facts: RequestFacts): boolean {
  for (const [key, condition] of Object.entries(query)) {
    if (key === '$and') {
      if (!(condition as Query[]).every((sub) => matchQuery(sub, facts))) return false;
      continue;
    }
    if (key === '$or') {
      if (!(condition as Query[]).some((sub) => matchQuery(sub, facts))) return false;
      continue;
    }
    const value = factOf(facts, key);
    if (!isRecord(condition)) {
      if (!equal(value, condition)) return false;
      continue;
    }
    for (const [operator, operand] of Object.entries(condition)) if (!matchOperator(value, operator, operand)) return false;
  }
  return true;
}
