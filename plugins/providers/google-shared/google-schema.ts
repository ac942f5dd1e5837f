import { isRecord } from '../../../core/spec/index.js';

/**
 * Gemini's function declarations and response schemas accept an OpenAPI subset of JSON Schema.
 * Schemas OpenAI accepts (with `additionalProperties`, `strict`, `$schema`, `$ref`/`$defs`, type
 * arrays, `const`, `oneOf`, `allOf`) are rewritten to that subset so they do not fail upstream.
 */

type Schema = Record<string, unknown>;

/** Keywords of Gemini's `Schema` object; every other keyword is dropped. */
const KEPT = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'items',
  'properties',
  'required',
  'anyOf',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minProperties',
  'maxProperties',
  'propertyOrdering',
  'default',
  'example',
]);

const FORMATS: Record<string, Set<string>> = {
  string: new Set(['date-time', 'enum']),
  number: new Set(['float', 'double']),
  integer: new Set(['int32', 'int64']),
};

/** Recursive `$ref`s are cut at this depth (Gemini has no recursion) to a plain object. */
const MAX_DEPTH = 32;

/**
 * At most this many schema nodes are written: `$ref`s are inlined each time they appear, so a small
 * schema whose definitions point to each other twice would otherwise expand exponentially. Nodes past
 * the budget are cut to a plain object, like recursion.
 */
export const MAX_NODES = 2000;

/** The document `$ref`s resolve against, and the nodes still allowed. */
interface Context {
  root: Schema;
  budget: number;
}

function resolvePointer(root: Schema, reference: string): Schema | undefined {
  if (!reference.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of reference.slice(1).split('/').filter(Boolean)) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      return undefined; // a malformed escape (`%E0`) points nowhere: cut like any unresolvable reference
    }
    const key = decoded.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isRecord(node)) return undefined;
    node = node[key];
  }
  return isRecord(node) ? node : undefined;
}

/** Inlines `$ref` and merges `allOf`, so the rest of the cleaner sees plain schemas. */
function expand(node: Schema, context: Context, stack: readonly string[]): { schema: Schema; stack: readonly string[] } | undefined {
  let schema = node;
  let seen = stack;
  while (typeof schema.$ref === 'string') {
    const reference = schema.$ref;
    if (seen.includes(reference) || seen.length >= MAX_DEPTH || context.budget <= 0) return undefined;
    context.budget -= 1;
    const target = resolvePointer(context.root, reference);
    if (!target) return undefined;
    const { $ref: _ref, ...siblings } = schema;
    schema = { ...target, ...siblings };
    seen = [...seen, reference];
  }
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...rest } = schema;
    const merged: Schema = { ...rest };
    for (const part of allOf) {
      if (!isRecord(part) || context.budget <= 0) continue;
      context.budget -= 1;
      const expanded = expand(part, context, seen);
      if (!expanded) continue;
      const { properties, required, ...others } = expanded.schema;
      Object.assign(merged, { ...others, ...merged });
      if (isRecord(properties)) merged.properties = { ...(isRecord(merged.properties) ? merged.properties : {}), ...properties };
      if (Array.isArray(required)) merged.required = [...new Set([...(Array.isArray(merged.required) ? merged.required : []), ...required])];
    }
    schema = merged;
  }
  return { schema, stack: seen };
}

function clean(node: unknown, context: Context, stack: readonly string[]): Schema {
  if (!isRecord(node)) return {};
  if (context.budget <= 0) return { type: 'object', description: describeCut(node) };
  context.budget -= 1;
  const expanded = expand(node, context, stack);
  if (!expanded) return { type: 'object', description: describeCut(node) };
  const source = expanded.schema;
  const inner = expanded.stack;
  const out: Schema = {};

  let type = source.type;
  if (Array.isArray(type)) {
    const types = type.filter((entry) => entry !== 'null');
    if (types.length < type.length) out.nullable = true;
    if (types.length === 1) type = types[0];
    else {
      type = undefined;
      if (types.length > 1) out.anyOf = types.map((entry) => ({ type: entry }));
    }
  }
  if (typeof type === 'string' && type !== 'null') out.type = type;

  const alternatives = Array.isArray(source.anyOf) ? source.anyOf : Array.isArray(source.oneOf) ? source.oneOf : undefined;
  if (alternatives) {
    const kept = alternatives.filter((entry) => !(isRecord(entry) && entry.type === 'null'));
    if (kept.length < alternatives.length) out.nullable = true;
    const cleaned = kept.map((entry) => clean(entry, context, inner));
    if (cleaned.length === 1) Object.assign(out, cleaned[0], out.nullable ? { nullable: true } : {});
    else if (cleaned.length > 1) out.anyOf = cleaned;
  }

  for (const [key, value] of Object.entries(source)) {
    if (!KEPT.has(key) || key === 'type' || key === 'anyOf' || key in out) continue;
    if (key === 'properties') {
      if (!isRecord(value)) continue;
      const properties: Schema = {};
      for (const [name, property] of Object.entries(value)) properties[name] = clean(property, context, inner);
      if (Object.keys(properties).length > 0) out.properties = properties;
    } else if (key === 'items') {
      const item = Array.isArray(value) ? value[0] : value;
      if (isRecord(item)) out.items = clean(item, context, inner);
    } else if (key === 'enum') {
      if (!Array.isArray(value)) continue;
      const values = value.filter((entry) => entry !== null);
      if (values.length < value.length) out.nullable = true;
      if (values.length > 0 && values.every((entry) => typeof entry === 'string')) out.enum = values;
    } else if (key === 'format') {
      if (typeof value === 'string' && typeof out.type === 'string' && FORMATS[out.type]?.has(value)) out.format = value;
    } else {
      out[key] = value;
    }
  }
  if ('const' in source && typeof source.const === 'string' && out.enum === undefined) {
    out.enum = [source.const];
    out.type ??= 'string';
  }
  if (Array.isArray(out.required)) {
    const properties = isRecord(out.properties) ? out.properties : {};
    const required = out.required.filter((name): name is string => typeof name === 'string' && name in properties);
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  if (out.properties === undefined && out.type === undefined && out.anyOf === undefined && Object.keys(out).every((key) => key === 'description' || key === 'nullable' || key === 'title')) {
    // `{}` (any value) has no Gemini equivalent; a string lets the model still say something.
    out.type = 'string';
  }
  return out;
}

const describeCut = (node: Schema): string =>
  typeof node.description === 'string' ? node.description : 'A nested value (its recursive schema was cut for the provider).';

/** Rewrites one JSON Schema (with `$defs`/`definitions` resolved against itself) to Gemini's subset. */
export function cleanGeminiSchema(schema: unknown): Schema {
  return isRecord(schema) ? clean(schema, { root: schema, budget: MAX_NODES }, []) : {};
}

/**
 * A function's `parameters` for Gemini: cleaned, and absent when the function takes nothing (Gemini
 * refuses an object schema without properties there).
 */
export function geminiParameters(schema: unknown): Schema | undefined {
  if (!isRecord(schema)) return undefined;
  const cleaned = cleanGeminiSchema(schema);
  if (cleaned.type === 'object' && cleaned.properties === undefined) return undefined;
  return cleaned;
}
