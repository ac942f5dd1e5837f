/**
 * Helpers for `x-gateway-strict-api-compliance: true` (the default): responses carry only fields
 * of the operation's OpenAI schema, so strict clients and typed SDKs never meet a provider's extras.
 */

/** Usage fields of OpenAI's schemas (details objects included). */
export const USAGE_FIELDS = ['prompt_tokens', 'completion_tokens', 'total_tokens', 'prompt_tokens_details', 'completion_tokens_details'];

/** True when `value` has no own field outside `fields` (then stripping it changes nothing). */
export function onlyFields(value: object, fields: readonly string[]): boolean {
  for (const field in value) {
    if (Object.hasOwn(value, field) && !fields.includes(field)) return false;
  }
  return true;
}

/** A copy of `value` with only `fields` (those present). */
export function pick<T extends object>(value: T, fields: readonly string[]): T {
  const picked: Record<string, unknown> = {};
  for (const field of fields) {
    if (field in value) picked[field] = (value as Record<string, unknown>)[field];
  }
  return picked as T;
}

/** Replaces `value.usage` (when an object) by its picked copy. */
export function pickUsage<T extends { usage?: unknown }>(value: T, fields: readonly string[] = USAGE_FIELDS): void {
  if (value.usage && typeof value.usage === 'object') value.usage = pick(value.usage as object, fields);
}
