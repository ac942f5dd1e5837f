import type { MessagesStreamEvent } from '../../../spec/messages.js';
import type { ChatChunkChoice, ChatCompletionChunk, ErrorBody, Usage } from '../../../spec/unified.js';
import type { StreamEncoder } from '../../stream-relay.js';
import { messagesErrorBody } from './errors.js';
import { messageIdOf, stopReasonOf } from './from-chat.js';
import { messagesUsage } from '../../../spec/messages-usage.js';

/** One Messages stream event as SSE: its `type` is the event name. */
export const sseEvent = (event: MessagesStreamEvent): string => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/** The error event that ends a Messages stream that failed after its headers were sent. */
export const errorEvent = (error: ErrorBody): string => `event: error\ndata: ${JSON.stringify(messagesErrorBody(error, 500))}\n\n`;

/** The open content block: which unified source feeds it, and its index in the Message's content. */
type OpenBlock =
  | { readonly kind: 'text'; readonly index: number }
  | { readonly kind: 'thinking'; readonly index: number; readonly key: number }
  | { readonly kind: 'tool'; readonly index: number; readonly call: number };

/**
 * Where the encoder is. `waiting`: nothing sent yet (`message_start` goes with the first chunk).
 * `streaming`: the message is open, with at most one content block open. `finished`: the unified
 * stream gave its finish reason (every block is closed; `message_delta` waits for the usage, which
 * OpenAI-style streams send after it). `ended`: `message_stop` is sent; nothing more is.
 */
type EncoderState = 'waiting' | 'streaming' | 'finished' | 'ended';

/**
 * Encodes a unified chat stream as the Messages API's named events: `message_start` and a `ping`,
 * then per content block `content_block_start`, its deltas (`text_delta`, `thinking_delta`,
 * `signature_delta`, `input_json_delta`) and `content_block_stop`, one block open at a time; at the
 * end `message_delta` (stop reason, usage) and `message_stop`. Fed by the same chunks chat streams
 * are made of, after output guardrails judged them: their `content_filter` finish is the
 * `refusal` stop reason.
 */
export class MessagesStreamEncoder implements StreamEncoder<ChatCompletionChunk> {
  private state: EncoderState = 'waiting';
  private block?: OpenBlock;
  private nextIndex = 0;
  private stopReason = 'end_turn';
  /** Tool calls (by unified index) whose block was opened. */
  private readonly tools = new Set<number>();

  constructor(private readonly model: string) {}

  chunk(chunk: ChatCompletionChunk): string {
    if (this.state === 'ended') return '';
    let out = this.start(chunk);
    const choice = chunk.choices.find((entry) => entry.index === 0);
    if (!choice || this.state === 'finished') return out;
    out += this.reasoning(choice.delta);
    const content = choice.delta.content;
    if (typeof content === 'string' && content !== '') out += this.open({ kind: 'text' }, { type: 'text', text: '' }) + this.delta({ type: 'text_delta', text: content });
    for (const call of choice.delta.tool_calls ?? []) out += this.toolCall(call);
    if (choice.finish_reason) {
      out += this.close();
      this.stopReason = stopReasonOf(choice.finish_reason);
      this.state = 'finished';
    }
    return out;
  }

  end(usage: Usage | undefined, last: ChatCompletionChunk | undefined): string {
    if (this.state === 'ended') return '';
    const out = this.start(last) + this.close();
    this.state = 'ended';
    const { input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens } = messagesUsage(usage);
    return (
      out +
      sseEvent({
        type: 'message_delta',
        delta: { stop_reason: this.stopReason, stop_sequence: null },
        usage: { input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens },
      }) +
      sseEvent({ type: 'message_stop' })
    );
  }

  error(error: ErrorBody): string {
    this.state = 'ended';
    return errorEvent(error);
  }

  /** `message_start` (and a `ping`, as Anthropic sends) before anything else. */
  private start(chunk: ChatCompletionChunk | undefined): string {
    if (this.state !== 'waiting') return '';
    this.state = 'streaming';
    const message = {
      id: messageIdOf(chunk?.id),
      type: 'message',
      role: 'assistant',
      model: chunk?.model || this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return sseEvent({ type: 'message_start', message }) + sseEvent({ type: 'ping' });
  }

  /** Thinking pieces: the gateway's `content_blocks`, or the `reasoning_content` / `reasoning` text compatible servers stream. */
  private reasoning(delta: ChatChunkChoice['delta']): string {
    let out = '';
    if (Array.isArray(delta.content_blocks)) {
      for (const piece of delta.content_blocks as Array<Record<string, unknown>>) {
        const key = typeof piece.index === 'number' ? piece.index : 0;
        if (piece.type === 'redacted_thinking' && typeof piece.data === 'string') {
          out += this.open({ kind: 'thinking', key: -2 - this.nextIndex }, { type: 'redacted_thinking', data: piece.data }) + this.close();
        } else if (piece.type === 'thinking') {
          out += this.open({ kind: 'thinking', key }, { type: 'thinking', thinking: '', signature: '' });
          if (typeof piece.text === 'string' && piece.text !== '') out += this.delta({ type: 'thinking_delta', thinking: piece.text });
          if (typeof piece.signature === 'string' && piece.signature !== '') out += this.delta({ type: 'signature_delta', signature: piece.signature });
        }
      }
    }
    const text = delta.reasoning_content ?? delta.reasoning;
    if (typeof text === 'string' && text !== '') out += this.open({ kind: 'thinking', key: -1 }, { type: 'thinking', thinking: '', signature: '' }) + this.delta({ type: 'thinking_delta', thinking: text });
    return out;
  }

  private toolCall(call: NonNullable<ChatChunkChoice['delta']['tool_calls']>[number]): string {
    let out = '';
    if (!this.tools.has(call.index)) {
      this.tools.add(call.index);
      out += this.open({ kind: 'tool', call: call.index }, { type: 'tool_use', id: call.id ?? '', name: call.function?.name ?? '', input: {} }, true);
    }
    const piece = call.function?.arguments;
    // Arguments of an earlier call after a later one opened cannot be placed: Messages streams one block at a time.
    if (piece && this.block?.kind === 'tool' && this.block.call === call.index) out += this.delta({ type: 'input_json_delta', partial_json: piece });
    return out;
  }

  /** Opens a block for `source` unless the open one already is its block (`fresh`: always a new one). */
  private open(source: { kind: 'text' } | { kind: 'thinking'; key: number } | { kind: 'tool'; call: number }, contentBlock: Record<string, unknown>, fresh = false): string {
    const open = this.block;
    if (!fresh && open && open.kind === source.kind && (source.kind !== 'thinking' || (open.kind === 'thinking' && open.key === source.key))) return '';
    const out = this.close();
    const index = this.nextIndex++;
    this.block = { ...source, index } as OpenBlock;
    return out + sseEvent({ type: 'content_block_start', index, content_block: contentBlock });
  }

  private delta(delta: Record<string, unknown>): string {
    return sseEvent({ type: 'content_block_delta', index: this.block!.index, delta });
  }

  private close(): string {
    if (!this.block) return '';
    const { index } = this.block;
    this.block = undefined;
    return sseEvent({ type: 'content_block_stop', index });
  }
}
