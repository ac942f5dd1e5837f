import type { AnswerText } from '../guardrails/output/index.js';
import type { ChatChunkChoice, ChatCompletionChunk, ChatResponse, CompletionChoice, CompletionResponse } from '../spec/unified.js';
import { chunkWithIdentity } from './stream-relay.js';

/** Logprobs describe the tokens of the original text: they go when the text is rewritten or held back. */
const withoutStaleLogprobs = <Choice extends { logprobs?: unknown }>(choice: Choice, changed: boolean): Choice =>
  changed && choice.logprobs !== null && choice.logprobs !== undefined ? { ...choice, logprobs: null } : choice;

/** Chat: `message.content` in a plain answer, `delta.content` in a chunk; a denied choice has `content: null`. */
export const chatAnswerText: AnswerText<ChatResponse, ChatCompletionChunk> = {
  answer: {
    read: (choice) => (typeof choice.message?.content === 'string' ? choice.message.content : undefined),
    write: (choice, text) => withoutStaleLogprobs({ ...choice, message: { ...choice.message, content: text } }, text !== choice.message.content),
    denied: (choice) => withoutStaleLogprobs({ ...choice, message: { ...choice.message, content: null }, finish_reason: 'content_filter' }, true),
  },
  chunk: {
    read: (choice) => (typeof choice.delta?.content === 'string' ? choice.delta.content : undefined),
    write: (choice, text) => withoutStaleLogprobs({ ...choice, delta: { ...choice.delta, content: text } }, text !== choice.delta?.content),
    carriesMore: (choice) => Object.keys(choice.delta ?? {}).some((key) => key !== 'content'),
    released: (index, text): ChatChunkChoice => ({ index, delta: { content: text }, logprobs: null, finish_reason: null }),
    filtered: (source, indices) =>
      chunkWithIdentity<ChatCompletionChunk>(
        'chat.completion.chunk',
        source,
        indices.map((index) => ({ index, delta: {}, logprobs: null, finish_reason: 'content_filter' })),
        null,
      ),
  },
};

/**
 * Text completions: `text`, plain and streamed (the schema makes it a string, so a denied choice has
 * `text: ""` rather than chat's `null`).
 */
export const completionAnswerText: AnswerText<CompletionResponse, CompletionResponse> = {
  answer: {
    read: (choice) => (typeof choice.text === 'string' ? choice.text : undefined),
    write: (choice, text) => withoutStaleLogprobs({ ...choice, text }, text !== choice.text),
    denied: (choice) => withoutStaleLogprobs({ ...choice, text: '', finish_reason: 'content_filter' }, true),
  },
  chunk: {
    read: (choice) => (typeof choice.text === 'string' ? choice.text : undefined),
    write: (choice, text) => withoutStaleLogprobs({ ...choice, text }, text !== choice.text),
    carriesMore: () => false,
    released: (index, text): CompletionChoice => ({ index, text, logprobs: null, finish_reason: null }),
    filtered: (source, indices) =>
      chunkWithIdentity<CompletionResponse>(
        'text_completion',
        source,
        indices.map((index) => ({ index, text: '', logprobs: null, finish_reason: 'content_filter' })),
        null,
      ),
  },
};
