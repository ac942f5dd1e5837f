import type { RawData, WebSocket } from 'ws';
import { runChain } from '../../../guardrails/chain.js';
import type { CompiledPolicy } from '../../../guardrails/registry.js';
import { timeOrderedId } from '../../../ids.js';
import type { GatewayContext } from '../../../pipeline/context.js';
import { writeResponse } from '../../../pipeline/response.js';
import type { UpstreamRequest } from '../../../spec/provider.js';
import type { Usage } from '../../../spec/unified.js';
import { addUsage, eventTypeOf, finishedText, itemTexts, parseEvent, partKey, TEXT_DELTAS, usageOf } from './events.js';
import { SessionSummary } from './summary.js';

/** A session's bounds (the configuration's `realtime`; 0 disables one). */
export interface SessionBounds {
  readonly idleTimeoutMs: number;
  readonly maxSessionMs: number;
  readonly maxBufferedBytes: number;
}

export interface SessionDependencies {
  readonly bounds: SessionBounds;
  /** Charges a response's usage as it arrives; true when the key's budget is then spent. */
  readonly charge: (context: GatewayContext, usage: Usage, model: string | undefined) => Promise<boolean>;
  /** The guardrail policy that applies to the session (its input and output chains), if any. */
  readonly policy?: CompiledPolicy;
  /** Called once, when both sockets have closed and the summary is the context's response: runs the log stage. */
  readonly onEnd: (context: GatewayContext) => void;
}

/** Close codes the gateway uses (RFC 6455): 1008 for a bound it enforces, 1011 when the provider failed. */
const POLICY_CLOSE = 1008;
const FAULT_CLOSE = 1011;

type Side = 'client' | 'upstream';

/**
 * One Realtime session: the client's WebSocket and the provider's, relayed message for message
 * (the bytes as received; a message is parsed only when the gateway needs its fields). What it
 * does besides relaying:
 * - counts events by type, reads `response.done` usage (added to the transform slice, charged at once),
 *   keeps transcripts and errors for the log ({@link SessionSummary});
 * - judges the text of the client's `conversation.item.create` with the policy's input chain (a
 *   denied item is not sent; the client gets an `error` event), and each finished text or transcript
 *   part with its output chain, holding that part's deltas until then (a denial cancels the response
 *   upstream and ends it for the client with `response.done`, status `incomplete`, reason
 *   `content_filter`); later events of the same side wait, so order is kept;
 * - enforces an idle timeout and a maximum length, and back-pressure both ways (a side is paused
 *   while the other has more than `maxBufferedBytes` queued).
 */
export class RealtimeSession {
  readonly summary = new SessionSummary();
  private model: string | undefined;
  private readonly chains: Record<Side, { pending: number; tail: Promise<void> }> = { client: { pending: 0, tail: Promise.resolve() }, upstream: { pending: 0, tail: Promise.resolve() } };
  /** Text deltas held until their part is judged, by part. */
  private readonly held = new Map<string, Buffer[]>();
  /** Responses an output denial ended: their further events are dropped. */
  private readonly cut = new Set<string>();
  private readonly open: Record<Side, boolean> = { client: true, upstream: true };
  private idleTimer?: NodeJS.Timeout;
  private lifeTimer?: NodeJS.Timeout;
  private ending = false;

  constructor(
    private readonly client: WebSocket,
    private readonly upstream: WebSocket,
    private readonly context: GatewayContext,
    upstreamRequest: UpstreamRequest,
    private readonly dependencies: SessionDependencies,
  ) {
    this.model = context.request.model;
    context.transform = { upstreamRequest };
    client.on('message', (data, isBinary) => this.received('client', data, isBinary));
    upstream.on('message', (data, isBinary) => this.received('upstream', data, isBinary));
    client.on('close', (code, reason) => this.closed('client', code, reason.toString()));
    upstream.on('close', (code, reason) => this.closed('upstream', code, reason.toString()));
    client.on('error', (error) => this.failed('client', error));
    upstream.on('error', (error) => this.failed('upstream', error));
    upstream.resume();
    const { idleTimeoutMs, maxSessionMs } = dependencies.bounds;
    if (idleTimeoutMs > 0) this.idleTimer = setTimeout(() => this.stop({ code: 'session_idle_timeout', message: `The session had no event for ${idleTimeoutMs} ms.` }), idleTimeoutMs);
    if (maxSessionMs > 0) this.lifeTimer = setTimeout(() => this.stop({ code: 'session_expired', message: `The session reached the gateway's maximum length of ${maxSessionMs} ms.` }), maxSessionMs);
  }

  private received(side: Side, data: RawData, isBinary: boolean): void {
    this.idleTimer?.refresh();
    const message = data as Buffer;
    const type = isBinary ? 'binary' : (eventTypeOf(message) ?? 'unknown');
    this.summary.count(side === 'client' ? 'client' : 'server', type);
    const chain = this.chains[side];
    const needsWork = !isBinary && (side === 'client' ? this.clientWork(type) : this.upstreamWork(type));
    if (!needsWork && chain.pending === 0) {
      this.relay(side, message, isBinary);
      return;
    }
    // A message that needs work (or follows one still being worked on) waits its turn: order is kept.
    chain.pending++;
    chain.tail = chain.tail
      .then(() => (needsWork ? (side === 'client' ? this.fromClient(message) : this.fromUpstream(type, message)) : this.relay(side, message, isBinary)))
      .catch((error: unknown) => this.summary.error({ source: 'gateway', code: 'internal_error', message: String((error as Error)?.message ?? error) }))
      .finally(() => chain.pending--);
  }

  private clientWork(type: string): boolean {
    return type === 'conversation.item.create' && (this.dependencies.policy?.input.length ?? 0) > 0;
  }

  private upstreamWork(type: string): boolean {
    return (
      type === 'response.done' ||
      type === 'error' ||
      type === 'session.created' ||
      type.endsWith('.done') ||
      type === 'conversation.item.input_audio_transcription.completed' ||
      (this.judgesOutput() && TEXT_DELTAS.has(type)) ||
      (this.cut.size > 0 && type.startsWith('response.'))
    );
  }

  private judgesOutput(): boolean {
    return (this.dependencies.policy?.output.length ?? 0) > 0;
  }

  /** Sends `message` on from `side` to the other side, pausing `side` while the other has too much queued. */
  private relay(side: Side, message: Buffer | string, binary = false): void {
    const to = side === 'client' ? this.upstream : this.client;
    const from = side === 'client' ? this.client : this.upstream;
    if (to.readyState !== to.OPEN) return;
    const limit = this.dependencies.bounds.maxBufferedBytes;
    if (limit === 0 || to.bufferedAmount + message.length <= limit) {
      to.send(message, { binary });
      return;
    }
    from.pause();
    to.send(message, { binary }, () => from.resume());
  }

  /** Sends the client an event of the gateway's own. */
  private tell(event: Record<string, unknown>): void {
    this.relay('upstream', JSON.stringify({ event_id: `event_gw_${timeOrderedId()}`, ...event }));
  }

  private async fromClient(message: Buffer): Promise<void> {
    const policy = this.dependencies.policy!;
    const event = parseEvent(message);
    if (!event) return this.relay('client', message);
    const { texts, rewrite } = itemTexts(event);
    if (texts.length === 0) return this.relay('client', message);
    const guardrail = this.context.guardrail!;
    const outcome = await runChain(
      policy.input,
      { side: 'input', operation: 'realtime', model: this.model, texts, metadata: this.context.metadata, parameters: {}, partial: false },
      policy.mode,
      (entry) => guardrail.verdicts.push(entry),
      guardrail.memo,
    );
    if (outcome.action === 'deny') {
      const text = policy.revealReasons ? `The item was refused by the gateway's content policy: ${outcome.reason}` : "The item was refused by the gateway's content policy.";
      this.summary.error({ source: 'gateway', code: 'guardrail_denied', message: text });
      this.tell({ type: 'error', error: { type: 'invalid_request_error', code: 'guardrail_denied', message: text, param: null, event_id: event.event_id ?? null } });
      return;
    }
    this.relay('client', outcome.action === 'transform' ? JSON.stringify(rewrite(outcome.texts)) : message);
  }

  private async fromUpstream(type: string, message: Buffer): Promise<void> {
    const event = parseEvent(message);
    if (!event) return this.relay('upstream', message);
    const responseId = typeof event.response_id === 'string' ? event.response_id : typeof (event.response as { id?: unknown })?.id === 'string' ? ((event.response as { id: string }).id) : undefined;
    if (type === 'session.created') {
      const model = (event.session as { model?: unknown } | undefined)?.model;
      if (typeof model === 'string') this.model = this.context.transform!.model = model;
    } else if (type === 'response.done') {
      this.summary.response();
      // Deltas of a part that never finished (a cancelled response) were never judged: they are not sent.
      if (responseId !== undefined) for (const part of this.held.keys()) if (part.startsWith(`${responseId}:`)) this.held.delete(part);
      const usage = usageOf(event);
      if (usage) {
        this.context.transform!.usage = addUsage(this.context.transform!.usage, usage);
        void this.dependencies.charge(this.context, usage, this.model).then((spent) => {
          if (spent) this.stop({ code: 'budget_exceeded', message: "This key's budget is spent; the session is closed." });
        });
      }
    } else if (type === 'error') {
      const error = (event.error ?? {}) as { code?: unknown; message?: unknown };
      this.summary.error({ source: 'provider', code: typeof error.code === 'string' ? error.code : null, message: String(error.message ?? '') });
    }
    // The rest of a response an output denial ended is not sent (its usage above is still counted).
    if (responseId !== undefined && this.cut.has(responseId)) {
      if (type === 'response.done') this.cut.delete(responseId);
      return;
    }
    if (this.judgesOutput() && TEXT_DELTAS.has(type)) {
      const part = partKey(event);
      const held = this.held.get(part);
      if (held) held.push(message);
      else this.held.set(part, [message]);
      return;
    }
    const finished = finishedText(type, event);
    if (finished?.kind === 'output' && this.judgesOutput()) return this.judgeOutput(finished.part, finished.text, responseId, message);
    if (finished) this.summary.transcript(finished.kind === 'input' ? 'user' : 'assistant', finished.text);
    this.relay('upstream', message);
  }

  /** Judges a finished text part: allowed, its held deltas and its end go to the client; denied, its response is ended. */
  private async judgeOutput(part: string, text: string, responseId: string | undefined, message: Buffer): Promise<void> {
    const policy = this.dependencies.policy!;
    const guardrail = this.context.guardrail!;
    const held = this.held.get(part) ?? [];
    this.held.delete(part);
    const outcome = await runChain(
      policy.output,
      { side: 'output', operation: 'realtime', model: this.model, texts: [text], metadata: this.context.metadata, parameters: {}, partial: false },
      policy.mode,
      (entry) => guardrail.verdicts.push(entry),
      guardrail.memo,
    );
    if (outcome.action !== 'deny') {
      // A transform verdict cannot rewrite deltas already framed by the provider: the text is let through as judged whole.
      for (const delta of held) this.relay('upstream', delta);
      this.summary.transcript('assistant', text);
      this.relay('upstream', message);
      return;
    }
    this.summary.error({ source: 'gateway', code: 'guardrail_denied', message: "The response was ended by the gateway's content policy." });
    if (responseId === undefined) return;
    this.cut.add(responseId);
    this.relay('client', JSON.stringify({ type: 'response.cancel', response_id: responseId }));
    this.tell({
      type: 'response.done',
      response: { id: responseId, object: 'realtime.response', status: 'incomplete', status_details: { type: 'incomplete', reason: 'content_filter' }, output: [], usage: null },
    });
  }

  /** Ends the session for a bound (or a spent budget): an `error` event to the client, then both sides closed with 1008. */
  private stop({ code, message }: { code: string; message: string }): void {
    if (this.ending) return;
    this.summary.error({ source: 'gateway', code, message });
    this.tell({ type: 'error', error: { type: code === 'budget_exceeded' ? 'permission_error' : 'invalid_request_error', code, message, param: null, event_id: null } });
    this.end('gateway', POLICY_CLOSE, code);
  }

  private failed(side: Side, error: Error & { code?: string }): void {
    if (side === 'upstream') this.summary.error({ source: 'gateway', code: error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'frame_too_large' : 'upstream_error', message: `The provider's connection failed: ${error.message}` });
    else if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this.summary.error({ source: 'gateway', code: 'frame_too_large', message: 'The client sent a message larger than realtime.maxFrameBytes.' });
  }

  private closed(side: Side, code: number, reason: string): void {
    this.open[side] = false;
    if (!this.ending) {
      if (side === 'client') {
        this.summary.close('client', code, reason);
        this.end('client', 1000, '');
      } else if (code === 1000 || code === 1001) {
        this.summary.close('provider', code, reason);
        this.end('provider', code, reason);
      } else {
        // The provider went away mid-session (1006: no close frame): the client is told, then closed.
        const message = `The provider closed the session unexpectedly (${code}${reason ? `: ${reason}` : ''}).`;
        this.summary.close('provider', code, reason);
        this.summary.error({ source: 'gateway', code: 'upstream_closed', message });
        this.context.transform!.streamError = { message, type: 'upstream_error', param: null, code: 'upstream_closed' };
        this.tell({ type: 'error', error: { type: 'server_error', code: 'upstream_closed', message, param: null, event_id: null } });
        this.end('provider', FAULT_CLOSE, 'upstream_closed');
      }
    }
    if (!this.open.client && !this.open.upstream) this.finish();
  }

  /** Closes both sides (the one still open). */
  private end(by: 'client' | 'provider' | 'gateway', code: number, reason: string): void {
    this.ending = true;
    this.summary.close(by, code, reason);
    clearTimeout(this.idleTimer);
    clearTimeout(this.lifeTimer);
    for (const socket of [this.client, this.upstream]) {
      if (socket.readyState === socket.OPEN) socket.close(socket === this.upstream ? 1000 : code, socket === this.upstream ? '' : reason);
      else if (socket.readyState === socket.CONNECTING) socket.terminate();
    }
  }

  /** Cuts both sides at once (the gateway is closing). */
  terminate(): void {
    this.ending = true;
    this.summary.close('gateway', 1001, 'gateway closing');
    this.client.terminate();
    this.upstream.terminate();
  }

  private finish(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.lifeTimer);
    writeResponse(this.context, { status: 101, headers: {}, body: { json: this.summary.toJSON() } });
    this.dependencies.onEnd(this.context);
  }
}
