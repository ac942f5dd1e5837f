/**
 * A validator of the Responses stream grammar, run on every Responses stream the tests read:
 * sequence numbers increase by one from 0; the stream opens with `response.created` then
 * `response.in_progress`; every delta belongs to an item (and a part) that is open; each `done`
 * event carries exactly what its deltas added up to; items close with their parts closed; exactly
 * one terminal event (completed, incomplete or failed) ends the stream, and its response lists the
 * items that were streamed.
 */

export interface ResponsesEvent {
  type: string;
  sequence_number: number;
  [field: string]: any;
}

export interface GrammarResult {
  /** Everything wrong with the stream (empty when it follows the grammar). */
  readonly problems: string[];
  /** The response of the terminal event. */
  readonly response?: Record<string, any>;
  readonly terminal?: string;
  /** Output text by item id, as the deltas built it. */
  readonly texts: Map<string, string>;
  /** Function call arguments by item id. */
  readonly arguments: Map<string, string>;
  /** Reasoning summary text by item id. */
  readonly summaries: Map<string, string>;
  readonly types: string[];
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

interface OpenItem {
  id: string;
  type: string;
  parts: Map<number, { text: string; open: boolean }>;
  summaries: Map<number, { text: string; open: boolean }>;
  arguments: string;
  input: string;
}

/** Parses SSE text into events, checking that each `event:` name equals its data's `type`. */
export function parseResponsesSse(text: string): { events: ResponsesEvent[]; problems: string[] } {
  const events: ResponsesEvent[] = [];
  const problems: string[] = [];
  for (const block of text.split('\n\n')) {
    if (!block.trim()) continue;
    let name: string | undefined;
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) name = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    const event = JSON.parse(data) as ResponsesEvent;
    if (name !== event.type) problems.push(`event name ${name} does not match its type ${event.type}`);
    events.push(event);
  }
  return { events, problems };
}

export function validateResponsesStream(events: readonly ResponsesEvent[]): GrammarResult {
  const problems: string[] = [];
  const open = new Map<number, OpenItem>();
  const closed: Array<{ index: number; item: any }> = [];
  const texts = new Map<string, string>();
  const args = new Map<string, string>();
  const summaries = new Map<string, string>();
  let terminal: string | undefined;
  let response: Record<string, any> | undefined;
  const item = (event: ResponsesEvent): OpenItem | undefined => {
    const found = open.get(event.output_index);
    if (!found) problems.push(`${event.type} #${event.sequence_number}: output_index ${event.output_index} is not an open item`);
    else if (event.item_id !== undefined && event.item_id !== found.id) problems.push(`${event.type} #${event.sequence_number}: item_id ${event.item_id} is not the open item ${found.id}`);
    return found;
  };
  events.forEach((event, position) => {
    if (event.sequence_number !== position) problems.push(`event ${position} (${event.type}) has sequence_number ${event.sequence_number}`);
    if (terminal) problems.push(`${event.type} after the terminal event ${terminal}`);
    if (position === 0 && event.type !== 'response.created') problems.push(`the stream opens with ${event.type}`);
    if (position === 1 && event.type !== 'response.in_progress') problems.push(`the second event is ${event.type}`);
    switch (event.type) {
      case 'response.output_item.added':
        if (open.has(event.output_index) || closed.some((entry) => entry.index === event.output_index)) problems.push(`output_index ${event.output_index} opened twice`);
        open.set(event.output_index, { id: event.item.id, type: event.item.type, parts: new Map(), summaries: new Map(), arguments: '', input: '' });
        break;
      case 'response.content_part.added': {
        const found = item(event);
        if (found?.parts.get(event.content_index)?.open) problems.push(`content part ${event.content_index} of ${found.id} opened twice`);
        found?.parts.set(event.content_index, { text: '', open: true });
        break;
      }
      case 'response.output_text.delta':
      case 'response.output_text.done':
      case 'response.content_part.done':
      case 'response.refusal.delta':
      case 'response.refusal.done': {
        const part = item(event)?.parts.get(event.content_index);
        if (!part?.open) {
          problems.push(`${event.type} #${event.sequence_number}: content part ${event.content_index} is not open`);
          break;
        }
        if (event.type.endsWith('.delta')) part.text += event.delta;
        else if (event.type === 'response.output_text.done' && event.text !== part.text) problems.push(`output_text.done text ${JSON.stringify(event.text)} is not the deltas ${JSON.stringify(part.text)}`);
        else if (event.type === 'response.refusal.done' && event.refusal !== part.text) problems.push('refusal.done is not the deltas');
        else if (event.type === 'response.content_part.done') {
          const shown = event.part.text ?? event.part.refusal;
          if (shown !== part.text) problems.push(`content_part.done text ${JSON.stringify(shown)} is not the deltas ${JSON.stringify(part.text)}`);
          part.open = false;
        }
        break;
      }
      case 'response.function_call_arguments.delta':
      case 'response.function_call_arguments.done': {
        const found = item(event);
        if (found && found.type !== 'function_call') problems.push(`${event.type} on a ${found.type} item`);
        if (!found) break;
        if (event.type.endsWith('.delta')) found.arguments += event.delta;
        else if (event.arguments !== found.arguments) problems.push(`function_call_arguments.done ${JSON.stringify(event.arguments)} is not the deltas ${JSON.stringify(found.arguments)}`);
        break;
      }
      case 'response.custom_tool_call_input.delta':
      case 'response.custom_tool_call_input.done': {
        const found = item(event);
        if (!found) break;
        if (event.type.endsWith('.delta')) found.input += event.delta;
        else if (event.input !== found.input) problems.push('custom_tool_call_input.done is not the deltas');
        break;
      }
      case 'response.reasoning_summary_part.added':
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_summary_text.done':
      case 'response.reasoning_summary_part.done': {
        const found = item(event);
        if (!found) break;
        if (found.type !== 'reasoning') problems.push(`${event.type} on a ${found.type} item`);
        if (event.type === 'response.reasoning_summary_part.added') {
          found.summaries.set(event.summary_index, { text: '', open: true });
          break;
        }
        const summary = found.summaries.get(event.summary_index);
        if (!summary?.open) {
          problems.push(`${event.type}: summary ${event.summary_index} is not open`);
          break;
        }
        if (event.type.endsWith('.delta')) summary.text += event.delta;
        else if (event.type === 'response.reasoning_summary_text.done' && event.text !== summary.text) problems.push('reasoning_summary_text.done is not the deltas');
        else if (event.type === 'response.reasoning_summary_part.done') {
          if (event.part.text !== summary.text) problems.push('reasoning_summary_part.done is not the deltas');
          summary.open = false;
        }
        break;
      }
      case 'response.output_item.done': {
        const found = item(event);
        if (!found) break;
        if ([...found.parts.values(), ...found.summaries.values()].some((part) => part.open)) problems.push(`item ${found.id} closed with a part open`);
        if (event.item.type !== found.type) problems.push(`item ${found.id} opened as ${found.type}, closed as ${event.item.type}`);
        if (found.type === 'message') {
          const shown = (event.item.content ?? []).map((part: any) => part.text ?? part.refusal).join('');
          const streamed = [...found.parts.values()].map((part) => part.text).join('');
          if (shown !== streamed) problems.push(`message ${found.id} closed with ${JSON.stringify(shown)}, streamed ${JSON.stringify(streamed)}`);
          texts.set(found.id, streamed);
        }
        if (found.type === 'function_call') {
          if (event.item.arguments !== found.arguments) problems.push(`function call ${found.id} closed with other arguments`);
          args.set(found.id, found.arguments);
        }
        if (found.type === 'reasoning') summaries.set(found.id, [...found.summaries.values()].map((part) => part.text).join(''));
        open.delete(event.output_index);
        closed.push({ index: event.output_index, item: event.item });
        break;
      }
      default:
        if (TERMINAL.has(event.type)) {
          terminal = event.type;
          response = event.response;
          const status = event.type.slice('response.'.length);
          if (event.response?.status !== status) problems.push(`${event.type} with status ${event.response?.status}`);
          if (open.size > 0) problems.push(`${event.type} with items still open: ${[...open.values()].map((entry) => entry.id).join(', ')}`);
          const listed = (event.response?.output ?? []).map((entry: any) => entry.id);
          const streamed = closed.sort((a, b) => a.index - b.index).map((entry) => entry.item.id);
          if (JSON.stringify(listed) !== JSON.stringify(streamed)) problems.push(`the response lists ${JSON.stringify(listed)}, the stream closed ${JSON.stringify(streamed)}`);
        }
    }
  });
  if (!terminal) problems.push('no terminal event');
  return { problems, response, terminal, texts, arguments: args, summaries, types: events.map((event) => event.type) };
}

/** Reads a Responses stream from the official SDK and validates it. */
export async function collectResponsesStream(stream: AsyncIterable<unknown>): Promise<GrammarResult> {
  const events: ResponsesEvent[] = [];
  for await (const event of stream) events.push(event as ResponsesEvent);
  return validateResponsesStream(events);
}
