import { errors } from '../../../errors.js';
import type { MessagesBlock, MessagesMessage, MessagesRequest } from '../../../spec/messages.js';
import type { ChatExtension } from '../../../spec/provider.js';
import type { ChatMessage, ChatRequest, ToolCall } from '../../../spec/unified.js';
import { isRecord } from '../../../spec/is-record.js';

/** A Messages request as the unified chat request, and the fields the translation dropped (for the log). */
export interface ChatTranslation {
  readonly request: ChatRequest;
  readonly dropped: readonly string[];
}

/** Top-level fields the translation maps; any other is dropped and recorded. */
const MAPPED = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stream',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'metadata',
  'output_config',
]);

type Part = Record<string, unknown>;

/** One request's translation: the dropped fields are collected as it goes. */
class Translation {
  readonly dropped = new Set<string>();
  readonly messages: ChatMessage[] = [];

  constructor(private readonly provider: string) {}

  drop(field: string): void {
    this.dropped.add(field);
  }

  /** Fields of a block the chat shape has no place for (prompt-cache marks, citations). */
  private dropExtras(block: MessagesBlock): void {
    if (block.cache_control !== undefined) this.drop('cache_control');
    if (block.citations !== undefined) this.drop('citations');
  }

  /** A text, image or document block as a chat content part; undefined when the block has no chat equivalent. */
  part(block: MessagesBlock, param: string): Part | undefined {
    this.dropExtras(block);
    const source = isRecord(block.source) ? block.source : {};
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'image':
        if (source.type === 'base64') return { type: 'image_url', image_url: { url: `data:${String(source.media_type)};base64,${String(source.data)}` } };
        if (source.type === 'url') return { type: 'image_url', image_url: { url: source.url } };
        throw this.unreachable(`${param}.source`, 'an image named by file_id');
      case 'document':
        // A PDF's title becomes its file name; the context has no place in chat.
        if (block.context !== undefined && block.context !== null) this.drop('document.context');
        if (source.type === 'base64') {
          return { type: 'file', file: { file_data: `data:application/pdf;base64,${String(source.data)}`, filename: typeof block.title === 'string' && block.title ? block.title : 'document.pdf' } };
        }
        if (typeof block.title === 'string' && block.title) this.drop('document.title');
        if (source.type === 'text') return { type: 'text', text: source.data };
        if (source.type === 'content') return { type: 'text', text: typeof source.content === 'string' ? source.content : this.text(source.content as MessagesBlock[]) };
        throw this.unreachable(`${param}.source`, `a document given by ${source.type === 'url' ? 'URL' : 'file_id'}`);
      default:
        this.drop(`content.${block.type}`);
        return undefined;
    }
  }

  /** The text of text blocks (other blocks dropped). */
  text(blocks: readonly MessagesBlock[]): string {
    return blocks
      .map((block) => {
        this.dropExtras(block);
        if (block.type === 'text') return String(block.text);
        this.drop(`content.${block.type}`);
        return '';
      })
      .filter(Boolean)
      .join('\n');
  }

  private unreachable(param: string, what: string): Error {
    return errors.invalidRequest(`The provider "${this.provider}" cannot read ${what}; send the bytes (base64) instead.`, { param, code: 'unsupported_content' });
  }

  system(content: string | MessagesBlock[] | undefined): void {
    if (content === undefined) return;
    const text = typeof content === 'string' ? content : this.text(content);
    if (text) this.messages.push({ role: 'system', content: text });
  }

  user(content: MessagesBlock[], param: string): void {
    const parts: Part[] = [];
    content.forEach((block, index) => {
      const at = `${param}[${index}]`;
      if (block.type !== 'tool_result') {
        const part = this.part(block, at);
        if (part) parts.push(part);
        return;
      }
      this.dropExtras(block);
      if (block.is_error !== undefined) this.drop('tool_result.is_error');
      const inner = typeof block.content === 'string' ? [{ type: 'text', text: block.content }] : ((block.content ?? []) as MessagesBlock[]);
      const texts: string[] = [];
      inner.forEach((item, itemIndex) => {
        const part = this.part(item, `${at}.content[${itemIndex}]`);
        if (part?.type === 'text') texts.push(String(part.text));
        // Chat tool messages hold text only: images and documents of a result follow as user content.
        else if (part) parts.push(part);
      });
      this.messages.push({ role: 'tool', tool_call_id: String(block.tool_use_id), content: texts.join('\n') });
    });
    if (parts.length === 0) return;
    const only = parts.length === 1 && parts[0].type === 'text' ? parts[0].text : undefined;
    this.messages.push({ role: 'user', content: typeof only === 'string' ? only : parts });
  }

  assistant(content: MessagesBlock[]): void {
    let text = '';
    const toolCalls: ToolCall[] = [];
    for (const block of content) {
      this.dropExtras(block);
      if (block.type === 'text') text += String(block.text);
      else if (block.type === 'tool_use') {
        toolCalls.push({ id: String(block.id), type: 'function', function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) } });
      } else {
        // Thinking is signed for the provider that wrote it; another provider cannot verify it.
        this.drop(`content.${block.type}`);
      }
    }
    const message: ChatMessage = { role: 'assistant', content: text || (toolCalls.length > 0 ? null : '') };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    this.messages.push(message);
  }

  message(message: MessagesMessage, param: string): void {
    if (message.role === 'system') {
      this.system(message.content);
      return;
    }
    if (typeof message.content === 'string') {
      this.messages.push({ role: message.role, content: message.content });
      return;
    }
    if (message.role === 'assistant') this.assistant(message.content);
    else this.user(message.content, `${param}.content`);
  }
}

function tools(request: MessagesRequest, translation: Translation): ChatRequest['tools'] {
  if (!Array.isArray(request.tools)) return undefined;
  const mapped: unknown[] = [];
  request.tools.forEach((entry: unknown) => {
    const tool = entry as Record<string, unknown>;
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
      // A tool Anthropic runs (web search, code execution) or defines (bash, text editor): no chat equivalent.
      translation.drop(`tools.${String(tool.type)}`);
      return;
    }
    if (tool.cache_control !== undefined) translation.drop('cache_control');
    for (const field of ['defer_loading', 'allowed_callers', 'input_examples', 'eager_input_streaming']) if (tool[field] !== undefined) translation.drop(`tools.${field}`);
    const fn: Record<string, unknown> = { name: tool.name, parameters: tool.input_schema };
    if (typeof tool.description === 'string') fn.description = tool.description;
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
    mapped.push({ type: 'function', function: fn });
  });
  return mapped.length > 0 ? mapped : undefined;
}

function toolChoice(request: MessagesRequest, chat: ChatRequest, translation: Translation): void {
  const choice = request.tool_choice as { type?: string; name?: string; disable_parallel_tool_use?: boolean } | undefined;
  if (!choice) return;
  const names = new Set((chat.tools as Array<{ function: { name: string } }> | undefined)?.map((tool) => tool.function.name) ?? []);
  if (choice.type === 'none') chat.tool_choice = 'none';
  else if (names.size === 0) translation.drop('tool_choice');
  else if (choice.type === 'any') chat.tool_choice = 'required';
  else if (choice.type === 'tool') chat.tool_choice = { type: 'function', function: { name: choice.name } };
  else chat.tool_choice = 'auto';
  if (choice.disable_parallel_tool_use === true && names.size > 0) chat.parallel_tool_calls = false;
}

function thinking(request: MessagesRequest, chat: ChatRequest, extensions: readonly ChatExtension[], translation: Translation): void {
  const value = request.thinking as { type?: string; budget_tokens?: number } | undefined;
  if (!value) return;
  if (!extensions.includes('thinking')) {
    if (value.type !== 'disabled') translation.drop('thinking');
    return;
  }
  if (value.type === 'enabled') chat.thinking = { type: 'enabled', budget_tokens: value.budget_tokens };
  // Adaptive: the model decides how much to think, which a budget-less `enabled` asks of the chat providers that think.
  else if (value.type === 'adaptive') chat.thinking = { type: 'enabled' };
  else chat.thinking = { type: 'disabled' };
}

function outputConfig(request: MessagesRequest, chat: ChatRequest, translation: Translation): void {
  const config = request.output_config as Record<string, unknown> | undefined;
  if (!config) return;
  for (const field of Object.keys(config)) if (field !== 'format') translation.drop(`output_config.${field}`);
  const format = config.format as { type?: string; schema?: unknown } | null | undefined;
  if (format?.type === 'json_schema') chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema, strict: true } };
}

/**
 * Translates a validated Messages request into the unified chat request for a provider without a
 * native Messages API (`provider` names it in errors). Content the chat shape cannot hold is
 * dropped and listed; content the provider could never read (a file id, a document URL) is a 400.
 * `extensions` are the unified fields beyond OpenAI's the provider's chat adapter reads.
 */
export function chatRequestOf(request: MessagesRequest, provider: string, extensions: readonly ChatExtension[]): ChatTranslation {
  const translation = new Translation(provider);
  translation.system(request.system);
  request.messages.forEach((message, index) => translation.message(message, `messages[${index}]`));
  const chat: ChatRequest = { model: request.model, messages: translation.messages, max_tokens: request.max_tokens };
  if (request.stream === true) chat.stream = true;
  if (Array.isArray(request.stop_sequences) && request.stop_sequences.length > 0) chat.stop = request.stop_sequences;
  if (typeof request.temperature === 'number') chat.temperature = request.temperature;
  if (typeof request.top_p === 'number') chat.top_p = request.top_p;
  if (typeof request.top_k === 'number') {
    if (extensions.includes('top_k')) chat.top_k = request.top_k;
    else translation.drop('top_k');
  }
  const mappedTools = tools(request, translation);
  if (mappedTools) chat.tools = mappedTools;
  toolChoice(request, chat, translation);
  thinking(request, chat, extensions, translation);
  outputConfig(request, chat, translation);
  if (isRecord(request.metadata)) {
    if (typeof request.metadata.user_id === 'string') chat.user = request.metadata.user_id;
    for (const field of Object.keys(request.metadata)) if (field !== 'user_id') translation.drop(`metadata.${field}`);
  }
  for (const field of Object.keys(request)) if (!MAPPED.has(field)) translation.drop(field);
  return { request: chat, dropped: [...translation.dropped] };
}
