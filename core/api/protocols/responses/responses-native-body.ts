import { errors } from '../../../errors.js';
import type { ResponseItem, ResponsesRequest } from '../../../spec/responses.js';
import type { ConversationItem } from './responses-store.js';

const joinedText = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((part) => String((part as { text?: unknown }).text ?? '')).join('') : '';

/**
 * An earlier item as a native provider takes it back. Its own items go back as it made them (ids,
 * encrypted reasoning). Items of another provider (or translated by the gateway) lose their ids,
 * which the provider would look up in its own store; their reasoning is left out; assistant
 * messages become plain text turns. The client's own input goes back as sent.
 */
function replayed(entry: ConversationItem, provider: string): ResponseItem | undefined {
  const { item } = entry;
  if (entry.provider === provider) return item;
  if (item.type === 'reasoning') return undefined;
  const { id: _id, status: _status, ...rest } = item;
  if (entry.provider !== undefined && item.type === 'message') return { type: 'message', role: 'assistant', content: joinedText(item.content) };
  return rest;
}

/**
 * The body a provider that speaks the Responses API receives: the client's request with the
 * conversation of `previous_response_id` spelled out in `input` (the gateway keeps the state, so a
 * conversation may move between providers) and built-in tools the provider does not run removed.
 * `unchanged` tells when the client's bytes can be sent as received.
 */
export function nativeBody(
  request: ResponsesRequest,
  history: readonly ConversationItem[] | undefined,
  provider: string,
  builtInTools: readonly string[],
  refuseBuiltInTools: boolean,
): { body: ResponsesRequest; unchanged: boolean; droppedTools: string[]; dropped: string[] } {
  const droppedTools: string[] = [];
  const dropped: string[] = [];
  let body: ResponsesRequest = request;
  if (history !== undefined) {
    const { previous_response_id: _previous, ...rest } = request;
    const input: ResponseItem[] = typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : (request.input ?? []);
    const earlier = history.map((entry) => replayed(entry, provider)).filter((item): item is ResponseItem => item !== undefined);
    body = { ...rest, input: [...earlier, ...input] };
  }
  if (request.tools?.some((tool) => !['function', 'custom', 'namespace'].includes(tool.type) && !builtInTools.includes(tool.type))) {
    const kept = request.tools.filter((tool, index) => {
      const keep = ['function', 'custom', 'namespace'].includes(tool.type) || builtInTools.includes(tool.type);
      if (!keep && refuseBuiltInTools) {
        throw errors.invalidRequest(`The built-in tool "${tool.type}" cannot be run by the provider "${provider}".`, { param: `tools[${index}].type`, code: 'unsupported_tool' });
      }
      if (!keep) {
        droppedTools.push(tool.type);
        dropped.push(`tools[${index}]`);
      }
      return keep;
    });
    body = { ...body, tools: kept };
  }
  return { body, unchanged: body === request, droppedTools, dropped };
}
