import { Ajv, type ValidateFunction } from 'ajv';

let ajv: Ajv | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * The validator of a plugin's params schema, compiled once per schema object by one Ajv instance
 * for the whole process, created on first use: each `new Ajv()` compiles the JSON Schema
 * meta-schema, ~15 ms of start-up, and the plugin and policy registries each made one. Throws
 * when the schema does not compile.
 */
export function paramsValidator(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    ajv ??= new Ajv({ allErrors: true, strict: false });
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}
