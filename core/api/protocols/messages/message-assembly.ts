import type { StreamAssembly } from '../../../cache/cacheable.js';
import { isRecord } from '../../../spec/is-record.js';
import type { MessagesBlock, MessagesResponse, MessagesStreamEvent } from '../../../spec/messages.js';

/**
 * A native Messages stream added up to its Message (for the response cache): `message_start`
 * gives the identity and input usage, each block is started, filled by its deltas (`text_delta`,
 * `thinking_delta`, `signature_delta`, `input_json_delta`, `citations_delta`) and stopped,
 * `message_delta` gives the stop reason and output usage. No Message unless `message_stop` came
 * and every delta was understood (an unknown one leaves the answer unstored, never half stored).
 */
export class MessageAssembly implements StreamAssembly<{ readonly event: MessagesStreamEvent }, MessagesResponse> {
  private message?: MessagesResponse;
  private readonly json = new Map<number, string>();
  private stopped = false;
  private broken = false;

  push({ event }: { readonly event: MessagesStreamEvent }): void {
    const index = typeof event.index === 'number' ? event.index : -1;
    const block = this.message?.content[index];
    switch (event.type) {
      case 'message_start':
        if (isRecord(event.message)) this.message = { ...(event.message as unknown as MessagesResponse), content: [] };
        break;
      case 'content_block_start':
        if (this.message && isRecord(event.content_block)) this.message.content[index] = { ...(event.content_block as MessagesBlock) };
        else this.broken = true;
        break;
      case 'content_block_delta':
        if (block && isRecord(event.delta)) this.delta(block, index, event.delta);
        else this.broken = true;
        break;
      case 'content_block_stop':
        if (block && this.json.has(index)) this.input(block, this.json.get(index)!);
        break;
      case 'message_delta':
        if (!this.message) break;
        if (isRecord(event.delta)) Object.assign(this.message, event.delta);
        if (isRecord(event.usage)) this.message.usage = { ...this.message.usage, ...event.usage };
        break;
      case 'message_stop':
        this.stopped = true;
        break;
    }
  }

  result(): MessagesResponse | undefined {
    const message = this.message;
    if (!this.stopped || this.broken || !message || message.content.some((block) => block === undefined)) return undefined;
    return message;
  }

  private delta(block: MessagesBlock, index: number, delta: Record<string, unknown>): void {
    if (delta.type === 'text_delta' && typeof delta.text === 'string') block.text = String(block.text ?? '') + delta.text;
    else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') block.thinking = String(block.thinking ?? '') + delta.thinking;
    else if (delta.type === 'signature_delta' && typeof delta.signature === 'string') block.signature = delta.signature;
    else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') this.json.set(index, (this.json.get(index) ?? '') + delta.partial_json);
    else if (delta.type === 'citations_delta' && delta.citation !== undefined) block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
    else this.broken = true;
  }

  private input(block: MessagesBlock, text: string): void {
    try {
      block.input = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      this.broken = true;
    }
  }
}
