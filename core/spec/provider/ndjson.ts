import type { StreamDecoder, UpstreamEvent } from '../provider.js';

/**
 * Incremental decoder of a newline-delimited JSON stream (NDJSON, JSON Lines): one event per line,
 * the line's text as the event's `data` (no `event` name). Lines end in LF or CRLF; blank lines are
 * skipped; bytes may split anywhere, a UTF-8 sequence included. A provider whose stream is NDJSON
 * returns one from its chat adapter's `stream.createDecoder`; its mapper reads `data` with
 * `parseEventData`. The decoder does not parse JSON: a line that is not JSON reaches the mapper,
 * which ends the stream with an error (`MALFORMED_EVENT`).
 */
export class NdjsonDecoder implements StreamDecoder {
  private readonly text = new TextDecoder('utf-8');
  private buffer = '';

  push(bytes: Uint8Array): UpstreamEvent[] {
    return this.consume(this.text.decode(bytes, { stream: true }));
  }

  /** The body ended: a last line without its newline is still an event. */
  end(): UpstreamEvent[] {
    const events = this.consume(this.text.decode());
    const last = this.buffer.trim();
    this.buffer = '';
    return last === '' ? events : [...events, { data: last }];
  }

  private consume(input: string): UpstreamEvent[] {
    this.buffer += input;
    const events: UpstreamEvent[] = [];
    let start = 0;
    for (let newline = this.buffer.indexOf('\n'); newline !== -1; newline = this.buffer.indexOf('\n', start)) {
      const line = this.buffer.slice(start, newline).trim();
      if (line !== '') events.push({ data: line });
      start = newline + 1;
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }
}
