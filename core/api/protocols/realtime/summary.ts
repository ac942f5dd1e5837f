/** Most distinct event types counted per side; others are counted under `other`. */
const MAX_TYPES = 64;
/** Most characters of transcripts kept for the log (the log's body cap applies after). */
const MAX_TRANSCRIPT_CHARS = 16_384;
/** Most errors kept, and most characters of each message. */
const MAX_ERRORS = 20;
const MAX_MESSAGE_CHARS = 300;

/** One error a session met: an upstream `error` event, a guardrail's denial, a bound the gateway enforced, a fault. */
export interface SessionError {
  readonly source: 'provider' | 'gateway';
  readonly code: string | null;
  readonly message: string;
}

/**
 * What the log keeps of a Realtime session: events counted by type and side, the responses and
 * their usage, transcripts (the user's input audio transcribed, the model's text and audio
 * transcripts; each capped, in order), errors, and how it closed. It is the entry's response body,
 * so the body logging switches, redaction, the flagged-text mask and the size cap apply to it.
 */
export class SessionSummary {
  private readonly client: Record<string, number> = {};
  private readonly server: Record<string, number> = {};
  private readonly transcripts: Array<{ role: 'user' | 'assistant'; text: string }> = [];
  private transcriptChars = 0;
  private transcriptsCut = false;
  private readonly errors: SessionError[] = [];
  private errorsCut = 0;
  private responses = 0;
  private closed?: { by: 'client' | 'provider' | 'gateway'; code: number; reason: string };

  /** Counts an event from the client (`client`) or the provider (`server`). */
  count(side: 'client' | 'server', type: string): void {
    const counts = side === 'client' ? this.client : this.server;
    if (counts[type] !== undefined) counts[type]++;
    else if (Object.keys(counts).length < MAX_TYPES) counts[type] = 1;
    else counts.other = (counts.other ?? 0) + 1;
  }

  response(): void {
    this.responses++;
  }

  transcript(role: 'user' | 'assistant', text: string): void {
    if (text === '') return;
    const room = MAX_TRANSCRIPT_CHARS - this.transcriptChars;
    if (room <= 0) {
      this.transcriptsCut = true;
      return;
    }
    const kept = text.length > room ? text.slice(0, room) : text;
    if (kept.length < text.length) this.transcriptsCut = true;
    this.transcripts.push({ role, text: kept });
    this.transcriptChars += kept.length;
  }

  error(error: SessionError): void {
    if (this.errors.length >= MAX_ERRORS) {
      this.errorsCut++;
      return;
    }
    this.errors.push({ ...error, message: error.message.slice(0, MAX_MESSAGE_CHARS) });
  }

  /** Records how the session ended (the first call wins). */
  close(by: 'client' | 'provider' | 'gateway', code: number, reason: string): void {
    this.closed ??= { by, code, reason: reason.slice(0, MAX_MESSAGE_CHARS) };
  }

  toJSON(): Record<string, unknown> {
    return {
      object: 'realtime.session.summary',
      events: { client: this.client, server: this.server },
      responses: this.responses,
      transcripts: this.transcripts,
      ...(this.transcriptsCut ? { transcripts_truncated: true } : {}),
      errors: this.errors,
      ...(this.errorsCut > 0 ? { errors_left_out: this.errorsCut } : {}),
      ...(this.closed ? { closed: this.closed } : {}),
    };
  }
}
