import { type CacheableOperation, withoutDefaults } from '../../../cache/cacheable.js';
import { isRecord } from '../../../spec/is-record.js';
import type { ResponseObject, ResponsesRequest } from '../../../spec/responses.js';
import { chatUsage, newId } from './responses-objects.js';
import { replayResponse } from './responses-respond.js';
import { servedMcpTools } from './responses-mcp-tools.js';

/** Fields at the documented default, left out of the identity. */
const DEFAULTS = { temperature: 1, top_p: 1, parallel_tool_calls: true, truncation: 'disabled', tool_choice: 'auto' };

/** An input item's text (a string, or input/output text parts only); undefined for anything else. */
function itemText(item: unknown): string | undefined {
  if (!isRecord(item) || (item.type !== undefined && item.type !== 'message')) return undefined;
  if (typeof item.content === 'string') return `${String(item.role)}: ${item.content}`;
  if (!Array.isArray(item.content)) return undefined;
  const texts: string[] = [];
  for (const part of item.content) {
    if (!isRecord(part) || (part.type !== 'input_text' && part.type !== 'output_text') || typeof part.text !== 'string') return undefined;
    texts.push(part.text);
  }
  return `${String(item.role)}: ${texts.join('\n')}`;
}

/**
 * Whether a request stands alone: no `mcp` tool the gateway serves (its answer calls tools), `store: false`, and no `previous_response_id`, `conversation` or
 * `background` (each of which reads or writes state the cache cannot replay).
 */
const stateless = (body: Partial<ResponsesRequest>): boolean =>
  servedMcpTools(body).length === 0 &&
  body.store === false && (body.previous_response_id ?? undefined) === undefined && (body.conversation ?? undefined) === undefined && body.background !== true;

/**
 * The response cache's view of `POST /v1/responses`: only a stateless request is cached (see
 * {@link stateless}; any other is a BYPASS). Identity: the body without `stream` and fields at their
 * default; semantic lookups embed `input` (when it is text only), the rest must match exactly. The
 * answer stored is the finished Response (status `completed`; as the operation finished it, so after
 * output guardrails' rewrites, never a denial or an incomplete answer). A hit is a new response:
 * a new `id` and `created_at`, judged again, as JSON or as the Responses stream events.
 */
export const responsesCache: CacheableOperation<ResponseObject> = {
  identity: (body) => (isRecord(body) && stateless(body) ? withoutDefaults(body, DEFAULTS) : undefined),
  semantic(identity) {
    const input = identity.input;
    const lines = typeof input === 'string' ? [`user: ${input}`] : Array.isArray(input) ? input.map(itemText) : [undefined];
    if (lines.length === 0 || lines.some((line) => line === undefined)) return undefined;
    const { input: _input, ...rest } = identity;
    return { text: lines.join('\n'), rest };
  },
  storable: (response) => response.status === 'completed' && Array.isArray(response.output),
  usage(response) {
    const usage = chatUsage(response.usage);
    return { ...(usage ? { usage } : {}), ...(response.model ? { model: response.model } : {}) };
  },
  replay: (context, stored) => replayResponse(context, { ...stored, id: newId('resp'), created_at: Math.floor(Date.now() / 1000) }),
};
