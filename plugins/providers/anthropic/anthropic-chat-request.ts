import { type ChatMessage, type ChatRequest, type ContentPartSupport, errors, isRecord, readFilePart } from '../../../core/spec/index.js';
import { claudeThinking, parseDataUrl, thinkingBlocksOf, toolInput } from '../../shared/chat-mapping.js';

export type AnthropicBlock = Record<string, unknown> & { type: string };

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicBlock[];
}

/** A Messages API body (`model` is left out on Vertex AI, which names the model in the URL). */
export interface AnthropicRequestBody {
  model?: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: AnthropicBlock[];
  [field: string]: unknown;
}

export interface AnthropicRequestOptions {
  /** `max_tokens` is required by Anthropic: sent when the client gave none. */
  readonly defaultMaxTokens: number;
}

/** Anthropic's minimum thinking budget, used when `thinking.budget_tokens` is absent. */
const DEFAULT_THINKING_BUDGET = 1024;

/** Unified fields Anthropic has no equivalent for, refused rather than silently dropped. */
export function checkAnthropicRequest(request: ChatRequest): undefined {
  if (typeof request.n === 'number' && request.n > 1) throw errors.invalidRequest('This provider returns one choice per request: n must be 1.', { param: 'n', code: 'invalid_value' });
  const format = request.response_format;
  if (isRecord(format) && format.type !== 'text') {
    throw errors.invalidRequest(`response_format "${String(format.type)}" is not supported by this provider; describe the JSON you want in the prompt or use a tool.`, { param: 'response_format', code: 'invalid_value' });
  }
  if (request.logprobs === true) throw errors.invalidRequest('This provider does not return log probabilities.', { param: 'logprobs', code: 'invalid_value' });
}

function withCacheControl(block: AnthropicBlock, part: Record<string, unknown>): AnthropicBlock {
  return isRecord(part.cache_control) ? { ...block, cache_control: part.cache_control } : block;
}

function textBlocks(content: unknown): AnthropicBlock[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content
    .filter((part): part is Record<string, unknown> => isRecord(part) && typeof part.text === 'string' && part.text !== '')
    .map((part) => withCacheControl({ type: 'text', text: part.text }, part));
}

function imageBlock(url: string, param: string): AnthropicBlock {
  const data = parseDataUrl(url);
  if (data) return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data } };
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw errors.invalidRequest(`Invalid '${param}': expected a base64 data URL or an http(s):// URL.`, { param, code: 'invalid_value' });
}

/** File parts Anthropic takes: inline PDFs (base64 source) and plain text (text source); no OpenAI file ids. */
export const ANTHROPIC_CONTENT_PARTS: ContentPartSupport = { file: { mediaTypes: ['application/pdf', 'text/plain'], fileId: false } };

/** A `file` part as a `document` block; the file name becomes its title. */
function documentBlock(part: Record<string, unknown>, param: string): AnthropicBlock {
  const file = readFilePart(part);
  const inline = file.inline;
  // The core refused other files already (ANTHROPIC_CONTENT_PARTS); this guards a direct caller of the mapper.
  if (!inline || !ANTHROPIC_CONTENT_PARTS.file?.mediaTypes.includes(inline.mediaType)) {
    throw errors.invalidRequest(`Invalid '${param}': only PDF and plain text files given as file_data are taken.`, { param, code: 'unsupported_content_part' });
  }
  const source =
    inline.mediaType === 'text/plain'
      ? { type: 'text', media_type: 'text/plain', data: Buffer.from(inline.data, 'base64').toString('utf8') }
      : { type: 'base64', media_type: inline.mediaType, data: inline.data };
  return file.filename ? { type: 'document', source, title: file.filename } : { type: 'document', source };
}

function userContent(content: unknown, param: string): string | AnthropicBlock[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return [];
  return content.map((part, index): AnthropicBlock => {
    const at = `${param}[${index}]`;
    if (!isRecord(part)) throw errors.invalidRequest(`Invalid '${at}': expected a content part.`, { param: at, code: 'invalid_value' });
    if (part.type === 'text') return withCacheControl({ type: 'text', text: String(part.text ?? '') }, part);
    if (part.type === 'image_url' && isRecord(part.image_url) && typeof part.image_url.url === 'string') {
      return withCacheControl(imageBlock(part.image_url.url, `${at}.image_url.url`), part);
    }
    if (part.type === 'file') return withCacheControl(documentBlock(part, at), part);
    throw errors.invalidRequest(`Invalid '${at}.type': the content part type "${String(part.type)}" is not supported by this provider.`, { param: `${at}.type`, code: 'invalid_value' });
  });
}

/** Thinking blocks a client sends back (from a previous answer's `content_blocks`), needed with tools. */
const thinkingBlocks = (message: ChatMessage): AnthropicBlock[] =>
  thinkingBlocksOf(message).map((block) => (block.type === 'thinking' ? { type: 'thinking', thinking: block.text, signature: block.signature ?? '' } : block));

function assistantBlocks(message: ChatMessage): AnthropicBlock[] {
  const blocks = [...thinkingBlocks(message), ...textBlocks(message.content)];
  for (const call of message.tool_calls ?? []) blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments) });
  return blocks;
}

function toolResult(message: ChatMessage): AnthropicBlock {
  const content = typeof message.content === 'string' ? message.content : textBlocks(message.content);
  return { type: 'tool_result', tool_use_id: message.tool_call_id ?? '', content };
}

/** Unified messages → `system` blocks and alternating `messages`; same-role turns are merged. */
export function anthropicMessages(messages: ChatMessage[]): { system: AnthropicBlock[]; messages: AnthropicMessage[] } {
  const system: AnthropicBlock[] = [];
  const out: AnthropicMessage[] = [];
  const push = (role: AnthropicMessage['role'], content: string | AnthropicBlock[]) => {
    if (content.length === 0) return;
    const last = out.at(-1);
    if (last?.role !== role) {
      out.push({ role, content });
      return;
    }
    const blocks = (value: string | AnthropicBlock[]): AnthropicBlock[] => (typeof value === 'string' ? [{ type: 'text', text: value }] : value);
    last.content = [...blocks(last.content), ...blocks(content)];
  };
  messages.forEach((message, index) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...textBlocks(message.content));
        break;
      case 'user':
        push('user', userContent(message.content, `messages[${index}].content`));
        break;
      case 'assistant':
        push('assistant', assistantBlocks(message));
        break;
      case 'tool':
        push('user', [toolResult(message)]);
        break;
      case 'function':
        throw errors.invalidRequest(`Invalid 'messages[${index}].role': the deprecated "function" role is not supported by this provider; use tool messages.`, { param: `messages[${index}].role`, code: 'invalid_value' });
    }
  });
  return { system, messages: out };
}

function toolChoice(choice: unknown, parallel: unknown): Record<string, unknown> | undefined {
  let mapped: Record<string, unknown> | undefined;
  if (choice === 'auto') mapped = { type: 'auto' };
  else if (choice === 'none') mapped = { type: 'none' };
  else if (choice === 'required') mapped = { type: 'any' };
  else if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') mapped = { type: 'tool', name: choice.function.name };
  if (parallel === false) mapped = { ...(mapped ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return mapped;
}

function tools(request: ChatRequest): AnthropicBlock[] | undefined {
  if (!Array.isArray(request.tools)) return undefined;
  const mapped = request.tools
    .filter((tool): tool is { function: Record<string, unknown> } => isRecord(tool) && tool.type === 'function' && isRecord(tool.function))
    .map(({ function: fn }) => {
      const tool: Record<string, unknown> = { name: fn.name, input_schema: isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } };
      if (typeof fn.description === 'string') tool.description = fn.description;
      return tool as AnthropicBlock;
    });
  return mapped.length > 0 ? mapped : undefined;
}

/** The unified chat request as a Messages API body. */
export function toAnthropicBody(request: ChatRequest, options: AnthropicRequestOptions): AnthropicRequestBody {
  checkAnthropicRequest(request);
  const { system, messages } = anthropicMessages(request.messages);
  const thinking = claudeThinking(request, DEFAULT_THINKING_BUDGET);
  const requested = request.max_completion_tokens ?? request.max_tokens;
  const budget = thinking?.type === 'enabled' ? thinking.budget_tokens : 0;
  const maxTokens = typeof requested === 'number' ? requested : options.defaultMaxTokens + budget;
  const body: AnthropicRequestBody = { model: request.model, max_tokens: maxTokens, messages };
  if (system.length > 0) body.system = system;
  if (typeof request.temperature === 'number') body.temperature = Math.min(request.temperature, 1);
  if (typeof request.top_p === 'number') body.top_p = request.top_p;
  if (typeof request.top_k === 'number') body.top_k = request.top_k;
  const stop = request.stop;
  if (typeof stop === 'string') body.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) body.stop_sequences = stop;
  const mappedTools = tools(request);
  if (mappedTools) body.tools = mappedTools;
  const choice = toolChoice(request.tool_choice, request.parallel_tool_calls);
  if (choice && mappedTools) body.tool_choice = choice;
  if (thinking) body.thinking = thinking;
  if (typeof request.user === 'string') body.metadata = { user_id: request.user };
  if (request.stream) body.stream = true;
  return body;
}
