import type OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

export interface CollectedStream {
  readonly text: string;
  readonly toolCalls: Array<{ id: string; name: string; arguments: string }>;
  readonly finishReason: string | null;
  readonly usage: ChatCompletionChunk['usage'] | undefined;
  readonly chunks: ChatCompletionChunk[];
}

/** Reads a streamed chat completion from the SDK, assembling text and tool calls the way clients do. */
export async function collectStream(stream: AsyncIterable<ChatCompletionChunk>): Promise<CollectedStream> {
  const chunks: ChatCompletionChunk[] = [];
  let text = '';
  let finishReason: string | null = null;
  let usage: ChatCompletionChunk['usage'] | undefined;
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? '';
      for (const call of choice.delta.tool_calls ?? []) {
        calls[call.index] ??= { id: '', name: '', arguments: '' };
        if (call.id) calls[call.index].id = call.id;
        if (call.function?.name) calls[call.index].name += call.function.name;
        calls[call.index].arguments += call.function?.arguments ?? '';
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  }
  return { text, toolCalls: calls, finishReason, usage, chunks };
}

/** A strict-mode schema as OpenAI accepts it (with keywords Gemini refuses). */
export const weatherParameters = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  properties: { city: { type: 'string' }, unit: { type: ['string', 'null'], enum: ['c', 'f', null] } },
  required: ['city', 'unit'],
};

export const weatherTool: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather of a city', parameters: weatherParameters, strict: true },
};
