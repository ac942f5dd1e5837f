import type { ResponseItem, ResponseObject } from '../../../spec/responses.js';
import type { ChatChunkChoice, ChatCompletionChunk, ErrorBody, Usage } from '../../../spec/unified.js';
import type { StreamEncoder } from '../../stream-relay.js';
import { EventWriter, terminalEvent } from './responses-events.js';
import { callItem, clientItems, customInput, messageItem, newId, outputTextPart, reasoningItem, responseUsage, statusOf } from './responses-objects.js';
import type { ReasoningBlock } from './responses-reasoning.js';
import type { ToolName } from './responses-to-chat.js';

/** An item being streamed. Calls stay open together (providers may interleave parallel calls); reasoning and text one at a time. */
type OpenItem =
  | { kind: 'reasoning'; id: string; outputIndex: number; block: number; blocks: ReasoningBlock[]; summaryOpen: boolean }
  | { kind: 'message'; id: string; outputIndex: number; text: string }
  | { kind: 'call'; id: string; outputIndex: number; callId: string; name: string; arguments: string; tool?: ToolName };

/** A streamed piece of a reasoning block (`delta.content_blocks` of a unified chunk). */
interface BlockPiece {
  index?: number;
  type?: string;
  text?: string;
  signature?: string;
  data?: string;
}

/** What the encoder needs besides the chunks. */
export interface EncoderOptions {
  readonly shell: ResponseObject;
  readonly tools: ReadonlyMap<string, ToolName>;
  readonly provider: string;
  readonly include: readonly string[] | null | undefined;
  /** Called with the finished Response (items as stored, reasoning sealed) before the terminal event is written. */
  finished(response: ResponseObject): Promise<void>;
}

/**
 * The Responses stream encoder: a state machine fed by the unified chat chunks (after the output
 * judge), writing the documented events with increasing `sequence_number`. States: `idle` (nothing
 * written), `streaming` (created and in progress written; items open and close as the chunks go),
 * `ended` (exactly one terminal event written: completed, incomplete or failed).
 */
export class ResponsesStreamEncoder implements StreamEncoder<ChatCompletionChunk> {
  private state: 'idle' | 'streaming' | 'ended' = 'idle';
  private readonly writer = new EventWriter();
  /** Finished items by output index (as stored: reasoning sealed). */
  private readonly items: ResponseItem[] = [];
  private current?: Extract<OpenItem, { kind: 'reasoning' | 'message' }>;
  private readonly calls = new Map<number, Extract<OpenItem, { kind: 'call' }>>();
  private nextIndex = 0;
  private finishReason: string | null = null;
  private model?: string;

  constructor(private readonly options: EncoderOptions) {}

  chunk(chunk: ChatCompletionChunk): string {
    let out = this.start();
    if (chunk.model) this.model = chunk.model;
    const choice = chunk.choices.find((entry) => entry.index === 0);
    if (!choice) return out;
    out += this.delta(choice);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return out;
  }

  async end(usage: Usage | undefined): Promise<string> {
    const out = this.start() + this.closeAll('completed');
    const response: ResponseObject = { ...this.response(), ...statusOf(this.finishReason), usage: usage ? responseUsage(usage) : null };
    return out + (await this.finish(response));
  }

  async error(error: ErrorBody): Promise<string> {
    const out = this.start() + this.closeAll('incomplete');
    const response: ResponseObject = { ...this.response(), status: 'failed', error: { code: error.code ?? error.type, message: error.message } };
    return out + (await this.finish(response));
  }

  private response(): ResponseObject {
    return { ...this.options.shell, model: this.model ?? this.options.shell.model, output: this.items.filter(Boolean) };
  }

  private async finish(response: ResponseObject): Promise<string> {
    if (this.state === 'ended') return '';
    this.state = 'ended';
    await this.options.finished(response);
    const shown = { ...response, output: clientItems(response.output, this.options.include) };
    return this.writer.write(terminalEvent(response), { response: shown });
  }

  private start(): string {
    if (this.state !== 'idle') return '';
    this.state = 'streaming';
    const response = this.options.shell;
    return this.writer.write('response.created', { response }) + this.writer.write('response.in_progress', { response });
  }

  private delta(choice: ChatChunkChoice): string {
    let out = '';
    const blocks = choice.delta.content_blocks;
    if (Array.isArray(blocks)) for (const piece of blocks as BlockPiece[]) out += this.reasoning(piece);
    if (typeof choice.delta.content === 'string' && choice.delta.content !== '') out += this.text(choice.delta.content);
    for (const piece of choice.delta.tool_calls ?? []) out += this.call(piece);
    return out;
  }

  private emit(type: string, fields: Record<string, unknown>): string {
    return this.writer.write(type, fields);
  }

  private reasoning(piece: BlockPiece): string {
    if (piece.type !== 'thinking' && piece.type !== 'redacted_thinking') return '';
    let out = '';
    const block = piece.index ?? 0;
    let item = this.current;
    if (item?.kind !== 'reasoning' || item.block !== block) {
      out += this.closeCalls() + this.closeCurrent('completed');
      item = { kind: 'reasoning', id: newId('rs'), outputIndex: this.nextIndex++, block, blocks: [], summaryOpen: false };
      this.current = item;
      out += this.emit('response.output_item.added', { output_index: item.outputIndex, item: { id: item.id, type: 'reasoning', summary: [] } });
    }
    const at = { item_id: item.id, output_index: item.outputIndex, summary_index: 0 };
    if (piece.type === 'redacted_thinking') {
      if (typeof piece.data === 'string') item.blocks.push({ type: 'redacted_thinking', data: piece.data });
      return out;
    }
    let thinking = item.blocks.find((entry): entry is Extract<ReasoningBlock, { type: 'thinking' }> => entry.type === 'thinking');
    if (!thinking) {
      thinking = { type: 'thinking', text: '' };
      item.blocks.push(thinking);
    }
    if (piece.signature) thinking.signature = (thinking.signature ?? '') + piece.signature;
    if (piece.text) {
      if (!item.summaryOpen) {
        item.summaryOpen = true;
        out += this.emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
      }
      thinking.text += piece.text;
      out += this.emit('response.reasoning_summary_text.delta', { ...at, delta: piece.text });
    }
    return out;
  }

  private text(delta: string): string {
    let out = '';
    let item = this.current;
    if (item?.kind !== 'message') {
      out += this.closeCalls() + this.closeCurrent('completed');
      item = { kind: 'message', id: newId('msg'), outputIndex: this.nextIndex++, text: '' };
      this.current = item;
      out += this.emit('response.output_item.added', { output_index: item.outputIndex, item: { id: item.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
      out += this.emit('response.content_part.added', { item_id: item.id, output_index: item.outputIndex, content_index: 0, part: outputTextPart('') });
    }
    item.text += delta;
    return out + this.emit('response.output_text.delta', { item_id: item.id, output_index: item.outputIndex, content_index: 0, delta, logprobs: [] });
  }

  private call(piece: NonNullable<ChatChunkChoice['delta']['tool_calls']>[number]): string {
    let out = '';
    let call = this.calls.get(piece.index);
    if (!call) {
      out += this.closeCurrent('completed');
      const name = piece.function?.name ?? '';
      const tool = this.options.tools.get(name);
      call = { kind: 'call', id: newId(tool?.kind === 'custom' ? 'ctc' : 'fc'), outputIndex: this.nextIndex++, callId: piece.id ?? newId('call'), name, arguments: '', tool };
      this.calls.set(piece.index, call);
      const opened = callItem(call.id, { id: call.callId, name, arguments: '' }, this.options.tools, 'in_progress');
      out += this.emit('response.output_item.added', { output_index: call.outputIndex, item: opened });
    }
    const fragment = piece.function?.arguments ?? '';
    if (fragment) {
      call.arguments += fragment;
      // A custom tool's input is the string inside the arguments object: it is written whole when the call ends.
      if (call.tool?.kind !== 'custom') out += this.emit('response.function_call_arguments.delta', { item_id: call.id, output_index: call.outputIndex, delta: fragment });
    }
    return out;
  }

  private closeCurrent(status: string): string {
    const item = this.current;
    if (!item) return '';
    this.current = undefined;
    let out = '';
    if (item.kind === 'message') {
      const at = { item_id: item.id, output_index: item.outputIndex, content_index: 0 };
      out += this.emit('response.output_text.done', { ...at, text: item.text, logprobs: [] });
      out += this.emit('response.content_part.done', { ...at, part: outputTextPart(item.text) });
      this.items[item.outputIndex] = messageItem(item.id, item.text, status);
    } else {
      const text = item.blocks.map((block) => (block.type === 'thinking' ? block.text : '')).join('');
      if (item.summaryOpen) {
        const at = { item_id: item.id, output_index: item.outputIndex, summary_index: 0 };
        out += this.emit('response.reasoning_summary_text.done', { ...at, text });
        out += this.emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
      }
      this.items[item.outputIndex] = reasoningItem(item.id, this.options.provider, item.blocks, status);
    }
    const [shown] = clientItems([this.items[item.outputIndex]], this.options.include);
    return out + this.emit('response.output_item.done', { output_index: item.outputIndex, item: shown });
  }

  private closeCalls(): string {
    let out = '';
    for (const call of [...this.calls.values()].sort((a, b) => a.outputIndex - b.outputIndex)) {
      const at = { item_id: call.id, output_index: call.outputIndex };
      if (call.tool?.kind === 'custom') {
        const input = customInput(call.arguments);
        out += this.emit('response.custom_tool_call_input.delta', { ...at, delta: input });
        out += this.emit('response.custom_tool_call_input.done', { ...at, input });
      } else {
        out += this.emit('response.function_call_arguments.done', { ...at, arguments: call.arguments });
      }
      const item = callItem(call.id, { id: call.callId, name: call.name, arguments: call.arguments }, this.options.tools);
      this.items[call.outputIndex] = item;
      out += this.emit('response.output_item.done', { output_index: call.outputIndex, item });
    }
    this.calls.clear();
    return out;
  }

  private closeAll(status: string): string {
    const incomplete = this.finishReason === 'length' || this.finishReason === 'content_filter' ? 'incomplete' : status;
    return this.closeCurrent(incomplete) + this.closeCalls();
  }
}
