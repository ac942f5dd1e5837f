import type { ResponseEvent, ResponseItem, ResponseObject } from '../../../spec/responses.js';
import { clientItems, outputTextPart } from './responses-objects.js';

/** Writes Responses stream events as SSE (`event:` the type, `data:` the event), numbering them from 0. */
export class EventWriter {
  private sequence = 0;

  /** One event of `type` with `fields`, numbered. */
  write(type: string, fields: Record<string, unknown>): string {
    return this.sse({ type, sequence_number: 0, ...fields });
  }

  /** An event as given, renumbered (events relayed from a provider that speaks the protocol). */
  sse(event: ResponseEvent): string {
    const numbered = { ...event, sequence_number: this.sequence++ };
    return `event: ${event.type}\ndata: ${JSON.stringify(numbered)}\n\n`;
  }
}

/** The terminal event type of a response's status. */
export const terminalEvent = (response: ResponseObject): string =>
  response.status === 'incomplete' ? 'response.incomplete' : response.status === 'failed' ? 'response.failed' : 'response.completed';

/** An item as `output_item.added` shows it: in progress, with no content yet. */
function openedItem(item: ResponseItem): ResponseItem {
  switch (item.type) {
    case 'message':
      return { ...item, status: 'in_progress', content: [] };
    case 'reasoning': {
      const { encrypted_content: _sealed, ...opened } = item;
      return { ...opened, summary: [] };
    }
    case 'function_call':
      return { ...item, status: 'in_progress', arguments: '' };
    case 'custom_tool_call':
      return { ...item, status: 'in_progress', input: '' };
    default:
      return item;
  }
}

/** The events of one finished item: added, its parts with one delta each, done. */
function itemEvents(writer: EventWriter, item: ResponseItem, outputIndex: number): string {
  const at = { item_id: item.id, output_index: outputIndex };
  let out = writer.write('response.output_item.added', { output_index: outputIndex, item: openedItem(item) });
  if (item.type === 'message' && Array.isArray(item.content)) {
    item.content.forEach((part, contentIndex) => {
      const text = String(part.text ?? part.refusal ?? '');
      const kind = part.type === 'refusal' ? 'refusal' : 'output_text';
      const empty = kind === 'refusal' ? { type: 'refusal', refusal: '' } : outputTextPart('');
      out += writer.write('response.content_part.added', { ...at, content_index: contentIndex, part: empty });
      if (kind === 'refusal') {
        out += writer.write('response.refusal.delta', { ...at, content_index: contentIndex, delta: text });
        out += writer.write('response.refusal.done', { ...at, content_index: contentIndex, refusal: text });
      } else {
        out += writer.write('response.output_text.delta', { ...at, content_index: contentIndex, delta: text, logprobs: [] });
        out += writer.write('response.output_text.done', { ...at, content_index: contentIndex, text, logprobs: [] });
      }
      out += writer.write('response.content_part.done', { ...at, content_index: contentIndex, part });
    });
  } else if (item.type === 'reasoning' && Array.isArray(item.summary)) {
    item.summary.forEach((part: { text?: string }, summaryIndex) => {
      const text = String(part.text ?? '');
      out += writer.write('response.reasoning_summary_part.added', { ...at, summary_index: summaryIndex, part: { type: 'summary_text', text: '' } });
      out += writer.write('response.reasoning_summary_text.delta', { ...at, summary_index: summaryIndex, delta: text });
      out += writer.write('response.reasoning_summary_text.done', { ...at, summary_index: summaryIndex, text });
      out += writer.write('response.reasoning_summary_part.done', { ...at, summary_index: summaryIndex, part: { type: 'summary_text', text } });
    });
  } else if (item.type === 'function_call') {
    out += writer.write('response.function_call_arguments.delta', { ...at, delta: item.arguments });
    out += writer.write('response.function_call_arguments.done', { ...at, arguments: item.arguments });
  } else if (item.type === 'custom_tool_call') {
    out += writer.write('response.custom_tool_call_input.delta', { ...at, delta: item.input });
    out += writer.write('response.custom_tool_call_input.done', { ...at, input: item.input });
  }
  return out + writer.write('response.output_item.done', { output_index: outputIndex, item });
}

/**
 * A finished Response as the events of a stream (for an upstream that answered a streamed request
 * with one JSON body, and for a plain answer a client asked to stream): created, in progress, each
 * item with its parts, then the terminal event of its status.
 */
export function responseAsEvents(response: ResponseObject, include: readonly string[] | null | undefined): string {
  const writer = new EventWriter();
  const shown = { ...response, output: clientItems(response.output, include) };
  const opening = { ...response, status: 'in_progress', output: [], usage: null, incomplete_details: null, error: null };
  let out = writer.write('response.created', { response: opening }) + writer.write('response.in_progress', { response: opening });
  shown.output.forEach((item, index) => {
    out += itemEvents(writer, item, index);
  });
  return out + writer.write(terminalEvent(shown), { response: shown });
}
