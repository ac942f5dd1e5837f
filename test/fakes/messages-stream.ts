/**
 * A checker of Anthropic Messages streams as a client receives them: it parses the SSE text and
 * enforces the event grammar Anthropic documents, throwing on the first violation, and returns the
 * Message the deltas add up to.
 * - Every event's name equals its data's `type`; `ping` may come anywhere.
 * - `message_start` first; then content blocks one at a time, numbered 0, 1, … in order of
 *   `content_block_start`; each `content_block_delta` and `content_block_stop` belongs to the open
 *   block, and its delta type to the block's type (`text_delta` → text, `input_json_delta` →
 *   tool_use, `thinking_delta` / `signature_delta` → thinking).
 * - One `message_delta` (stop reason, usage with `output_tokens`) once every block is closed, then
 *   exactly one terminal event: `message_stop`, or an `error` event (which ends a failed stream).
 * - Unknown event types are allowed anywhere before the end (Anthropic documents that it may add some).
 * - A tool_use block's accumulated `partial_json` parses as a JSON object.
 */

export interface StreamEvent {
  readonly event: string;
  readonly data: Record<string, any>;
}

export interface CheckedStream {
  readonly events: StreamEvent[];
  /** The Message the events accumulate to (content from the deltas, stop reason and usage merged). */
  readonly message: Record<string, any>;
  /** The error event's `error`, when the stream ended with one. */
  readonly error?: { type: string; message: string };
}

/** Splits SSE text into events (`event:` name and parsed `data:`). */
export function parseSse(text: string): StreamEvent[] {
  const events: StreamEvent[] = [];
  for (const frame of text.split(/\r?\n\r?\n/)) {
    if (!frame.trim()) continue;
    let event = '';
    const data: string[] = [];
    for (const line of frame.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length === 0) throw new Error(`an event without data: ${frame.slice(0, 80)}`);
    events.push({ event, data: JSON.parse(data.join('\n')) });
  }
  return events;
}

const DELTA_BLOCK: Record<string, string[]> = {
  text_delta: ['text'],
  input_json_delta: ['tool_use', 'server_tool_use'],
  thinking_delta: ['thinking'],
  signature_delta: ['thinking'],
  citations_delta: ['text'],
};

/** Checks `text` (a whole Messages stream as received) against the grammar; returns the accumulated Message. */
export function checkMessagesStream(text: string): CheckedStream {
  const events = parseSse(text);
  const fail = (index: number, why: string): never => {
    throw new Error(`Messages stream event ${index} (${events[index]?.event}): ${why}`);
  };
  let message: Record<string, any> | undefined;
  let open: number | undefined;
  let deltaSeen = false;
  let terminal: 'message_stop' | 'error' | undefined;
  let error: CheckedStream['error'];
  const json = new Map<number, string>();
  events.forEach(({ event, data }, index) => {
    if (event !== data.type) fail(index, `event name "${event}" differs from data.type "${data.type}"`);
    if (terminal) fail(index, `an event after ${terminal}`);
    if (event === 'ping') return;
    if (event === 'error') {
      if (typeof data.error?.type !== 'string' || typeof data.error?.message !== 'string') fail(index, 'an error event without error.type and error.message');
      terminal = 'error';
      error = data.error;
      return;
    }
    if (!message) {
      if (event !== 'message_start') fail(index, 'the first event is not message_start');
      const start = data.message;
      if (start?.type !== 'message' || start.role !== 'assistant' || !Array.isArray(start.content) || start.content.length !== 0) fail(index, 'message_start without an empty assistant message');
      if (typeof start.usage?.input_tokens !== 'number') fail(index, 'message_start without usage.input_tokens');
      message = structuredClone(start);
      return;
    }
    const content = message.content as Array<Record<string, any>>;
    switch (event) {
      case 'message_start':
        return fail(index, 'a second message_start');
      case 'content_block_start':
        if (deltaSeen) fail(index, 'a block after message_delta');
        if (open !== undefined) fail(index, `block ${open} is still open`);
        if (data.index !== content.length) fail(index, `index ${data.index}, expected ${content.length}`);
        if (typeof data.content_block?.type !== 'string') fail(index, 'content_block without a type');
        content.push(structuredClone(data.content_block));
        open = data.index;
        return;
      case 'content_block_delta': {
        if (open === undefined || data.index !== open) fail(index, `a delta for block ${data.index}, open: ${open}`);
        const block = content[data.index];
        const type = data.delta?.type;
        if (!DELTA_BLOCK[type]?.includes(block.type)) fail(index, `a ${type} in a ${block.type} block`);
        if (type === 'text_delta') block.text += data.delta.text;
        else if (type === 'thinking_delta') block.thinking += data.delta.thinking;
        else if (type === 'signature_delta') block.signature = data.delta.signature;
        else if (type === 'input_json_delta') json.set(data.index, (json.get(data.index) ?? '') + data.delta.partial_json);
        else if (type === 'citations_delta') block.citations = [...(block.citations ?? []), data.delta.citation];
        return;
      }
      case 'content_block_stop':
        if (open === undefined || data.index !== open) fail(index, `a stop for block ${data.index}, open: ${open}`);
        if (json.has(data.index)) {
          const parsed = JSON.parse(json.get(data.index)!);
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) fail(index, 'tool input is not a JSON object');
          content[data.index].input = parsed;
        }
        open = undefined;
        return;
      case 'message_delta':
        if (open !== undefined) fail(index, `message_delta with block ${open} open`);
        if (deltaSeen) fail(index, 'a second message_delta');
        if (typeof data.usage?.output_tokens !== 'number') fail(index, 'message_delta without usage.output_tokens');
        if (!('stop_reason' in (data.delta ?? {}))) fail(index, 'message_delta without delta.stop_reason');
        deltaSeen = true;
        message.stop_reason = data.delta.stop_reason;
        message.stop_sequence = data.delta.stop_sequence ?? null;
        for (const [field, value] of Object.entries(data.usage)) if (value !== null && value !== undefined) message.usage[field] = value;
        return;
      case 'message_stop':
        if (!deltaSeen) fail(index, 'message_stop before message_delta');
        terminal = 'message_stop';
        return;
      default:
        // Anthropic may add event types; clients skip the ones they do not know.
        return;
    }
  });
  if (!terminal) throw new Error('the Messages stream ended without message_stop or an error event');
  return { events, message: message ?? {}, ...(error ? { error } : {}) };
}
