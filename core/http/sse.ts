import type { StreamDecoder, UpstreamEvent } from '../spec/provider.js';

/**
 * Incremental server-sent-events decoder (the WHATWG event-stream rules): lines end in LF, CRLF or
 * CR; `data:` lines of one event are joined with LF; `event:` names it; lines starting with `:` are
 * comments; a blank line dispatches. Bytes may split anywhere, including inside a UTF-8 sequence.
 */
export class SseDecoder implements StreamDecoder {
  private readonly text = new TextDecoder('utf-8');
  private buffer = '';
  private data: string[] = [];
  private eventName: string | undefined;
  private pendingCarriageReturn = false;

  push(bytes: Uint8Array): UpstreamEvent[] {
    return this.consume(this.text.decode(bytes, { stream: true }));
  }

  /** Per the event-stream rules, an event not closed by a blank line before the end is discarded. */
  end(): UpstreamEvent[] {
    const events = this.consume(this.text.decode());
    this.buffer = '';
    this.data = [];
    this.eventName = undefined;
    return events;
  }

  private consume(input: string): UpstreamEvent[] {
    if (input === '') return []; // an empty read must not clear a pending CR
    let text = input;
    if (this.pendingCarriageReturn) {
      this.pendingCarriageReturn = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    this.buffer += text;
    const events: UpstreamEvent[] = [];
    let start = 0;
    const buffer = this.buffer;
    for (let index = 0; index < buffer.length; index++) {
      const character = buffer.charCodeAt(index);
      if (character !== 10 && character !== 13) continue;
      this.line(buffer.slice(start, index), events);
      if (character === 13) {
        if (index + 1 === buffer.length) this.pendingCarriageReturn = true;
        else if (buffer.charCodeAt(index + 1) === 10) index++;
      }
      start = index + 1;
    }
    this.buffer = buffer.slice(start);
    return events;
  }

  private line(line: string, events: UpstreamEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) {
        events.push(this.eventName === undefined ? { data: this.data.join('\n') } : { event: this.eventName, data: this.data.join('\n') });
      }
      this.data = [];
      this.eventName = undefined;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.eventName = value || undefined;
  }
}

/** One data-only SSE event. */
export function sseData(data: string): string {
  return `data: ${data}\n\n`;
}

export const SSE_DONE = 'data: [DONE]\n\n';
