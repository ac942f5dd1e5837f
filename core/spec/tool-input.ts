import { isRecord } from './is-record.js';

/**
 * A tool call's `arguments` string (echoed back by the client) as the JSON object native APIs want.
 * A model may have produced invalid JSON, and the history must still be accepted: a value that is
 * not an object is wrapped as `{"arguments": <value>}`, text that is not JSON as `{"arguments": "<raw>"}`.
 * Empty arguments are `{}`.
 */
export function toolInput(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : { arguments: parsed };
  } catch {
    return { arguments: text };
  }
}
