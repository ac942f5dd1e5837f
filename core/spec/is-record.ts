/** A JSON object: not null, not an array. The one guard for "is this a plain object" in the project. */
export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
