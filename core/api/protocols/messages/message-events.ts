import type { MessagesBlock, MessagesResponse } from '../../../spec/messages.js';
import { sseEvent } from './stream-encoder.js';

/** The empty block a `content_block_start` announces, and the deltas that fill it. */
function blockEvents(block: MessagesBlock, index: number): string {
  const start = (contentBlock: Record<string, unknown>) => sseEvent({ type: 'content_block_start', index, content_block: contentBlock });
  const delta = (value: Record<string, unknown>) => sseEvent({ type: 'content_block_delta', index, delta: value });
  let out: string;
  if (block.type === 'text') {
    const { text, ...rest } = block;
    out = start({ ...rest, text: '' }) + (text ? delta({ type: 'text_delta', text }) : '');
  } else if (block.type === 'thinking') {
    const { thinking, signature, ...rest } = block;
    out = start({ ...rest, thinking: '', signature: '' }) + (thinking ? delta({ type: 'thinking_delta', thinking }) : '') + (signature ? delta({ type: 'signature_delta', signature }) : '');
  } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
    const { input, ...rest } = block;
    const json = JSON.stringify(input ?? {});
    out = start({ ...rest, input: {} }) + (json === '{}' ? '' : delta({ type: 'input_json_delta', partial_json: json }));
  } else {
    out = start(block);
  }
  return out + sseEvent({ type: 'content_block_stop', index });
}

/**
 * A whole Message as the events of a Messages stream (for an upstream that answered a streamed
 * request with one JSON body): `message_start` with the input usage, a `ping`, each block started,
 * filled with its deltas and stopped, then `message_delta` and `message_stop`.
 */
export function messageAsEvents(message: MessagesResponse): string {
  const { content, stop_reason: stopReason, stop_sequence: stopSequence, usage, ...identity } = message;
  let out = sseEvent({ type: 'message_start', message: { ...identity, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } } });
  out += sseEvent({ type: 'ping' });
  content.forEach((block, index) => {
    out += blockEvents(block, index);
  });
  out += sseEvent({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: stopSequence }, usage: { output_tokens: usage.output_tokens } });
  return out + sseEvent({ type: 'message_stop' });
}
