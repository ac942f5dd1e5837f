import type { Ajv as AjvInstance, ErrorObject, ValidateFunction } from 'ajv';
import { BootError } from './errors.js';
import { requireDependency } from './require.js';

/** One reason a plugin's params do not satisfy its schema, as Ajv reports it. */
export type ParamsProblem = Pick<ErrorObject, 'instancePath' | 'message'>;

let ajv: AjvInstance | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * Ajv, loaded on first need. Importing it, compiling the JSON Schema meta-schema and generating
 * the code of every registered plugin's params schema took ~130 ms of a start-up of ~520 ms on the
 * bench's 2-core machine, for the shipped configuration whose 46 registrations all pass `{}` or
 * the shallow params {@link satisfies} decides (docs/performance.md, "Fifth pass").
 */
function validator(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    const { Ajv } = requireDependency('ajv') as typeof import('ajv');
    ajv ??= new Ajv({ allErrors: true, strict: false });
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/**
 * Checks a plugin's params against its params schema: the problems, none when they are valid.
 * A value {@link satisfies} accepts is valid without Ajv; anything else (a failure, or a keyword
 * it does not know) is decided by Ajv, which also words the problems. Throws when Ajv cannot
 * compile the schema (so a broken schema is reported as soon as params must be checked against it).
 */
export function paramsProblems(schema: object, params: unknown): readonly ParamsProblem[] {
  if (satisfies(params, schema)) return [];
  const validate = validator(schema);
  return validate(params) ? [] : (validate.errors ?? [{ instancePath: '', message: 'is not valid' }]);
}

/**
 * The boot check of a plugin's params (`label` names the plugin in the error; `root` names the
 * params themselves in a problem at their top level): `INVALID_MANIFEST` when the schema does not
 * compile, `INVALID_PARAMS` with every problem when the params do not satisfy it.
 */
export function assertParams(schema: object, params: unknown, label: string, root: string): void {
  let problems: readonly ParamsProblem[];
  try {
    problems = paramsProblems(schema, params);
  } catch (error) {
    throw new BootError('INVALID_MANIFEST', `${label}: params schema does not compile: ${(error as Error).message}`);
  }
  if (problems.length > 0) {
    throw new BootError('INVALID_PARAMS', `${label}: ${problems.map((problem) => `${problem.instancePath || root} ${problem.message}`).join('; ')}`);
  }
}

const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly']);

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function hasType(value: unknown, type: unknown): boolean {
  switch (type) {
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    default:
      return false;
  }
}

const isCount = (bound: unknown): bound is number => typeof bound === 'number' && Number.isInteger(bound) && bound >= 0;

/**
 * Whether `value` certainly satisfies `schema`, for the keywords params schemas use: `type`,
 * `enum` and `const` of primitives, `properties`, `required`, `additionalProperties`, `items`,
 * string lengths and `pattern`, number bounds, array lengths, and annotations. It never accepts
 * what Ajv would refuse: any other keyword, a keyword value of an unexpected shape, or a failed
 * check gives false, and Ajv decides (`test/core/params-schema.test.ts` holds it to Ajv's answers).
 */
export function satisfies(value: unknown, schema: unknown): boolean {
  if (schema === true) return true;
  if (!isPlainObject(schema)) return false;
  for (const [keyword, bound] of Object.entries(schema)) {
    if (ANNOTATIONS.has(keyword)) continue;
    switch (keyword) {
      case 'type':
        if (!(Array.isArray(bound) ? bound.some((type) => hasType(value, type)) : hasType(value, bound))) return false;
        break;
      case 'enum':
        if (!Array.isArray(bound) || (value !== null && typeof value === 'object') || !bound.includes(value)) return false;
        break;
      case 'const':
        if ((value !== null && typeof value === 'object') || bound !== value) return false;
        break;
      case 'properties':
        if (!isPlainObject(bound)) return false;
        if (!isPlainObject(value)) break;
        for (const [name, property] of Object.entries(bound)) {
          if (Object.hasOwn(value, name) && !satisfies(value[name], property)) return false;
        }
        break;
      case 'required':
        if (!Array.isArray(bound)) return false;
        if (isPlainObject(value) && !bound.every((name) => typeof name === 'string' && Object.hasOwn(value, name) && value[name] !== undefined)) return false;
        break;
      case 'additionalProperties': {
        if (!isPlainObject(value)) break;
        const known = isPlainObject(schema.properties) ? schema.properties : {};
        if ('patternProperties' in schema) return false;
        for (const name of Object.keys(value)) {
          if (Object.hasOwn(known, name)) continue;
          if (bound === false || !satisfies(value[name], bound)) return false;
        }
        break;
      }
      case 'items':
        if (!isPlainObject(bound)) return false;
        if (Array.isArray(value) && !value.every((item) => satisfies(item, bound))) return false;
        break;
      case 'minLength':
      case 'maxLength': {
        if (!isCount(bound)) return false;
        if (typeof value !== 'string') break;
        // Ajv counts code points, as the spread does.
        const length = [...value].length;
        if (keyword === 'minLength' ? length < bound : length > bound) return false;
        break;
      }
      case 'pattern': {
        if (typeof bound !== 'string') return false;
        if (typeof value !== 'string') break;
        let pattern: RegExp;
        try {
          pattern = new RegExp(bound, 'u');
        } catch {
          return false;
        }
        if (!pattern.test(value)) return false;
        break;
      }
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        if (typeof bound !== 'number') return false;
        if (typeof value !== 'number') break;
        // Ajv refuses NaN against a bound; so does this (and leaves Infinity to it).
        if (!Number.isFinite(value)) return false;
        if (keyword === 'minimum' ? value < bound : keyword === 'maximum' ? value > bound : keyword === 'exclusiveMinimum' ? value <= bound : value >= bound) return false;
        break;
      case 'minItems':
      case 'maxItems':
        if (!isCount(bound)) return false;
        if (Array.isArray(value) && (keyword === 'minItems' ? value.length < bound : value.length > bound)) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
