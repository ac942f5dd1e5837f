import { errors } from '../../../errors.js';
import { isRecord } from '../../../spec/is-record.js';
import type { ContentPart, ResponseItem, ResponsesRequest, ResponsesTool } from '../../../spec/responses.js';
import type { ChatMessage, ChatRequest, ToolCall } from '../../../spec/unified.js';
import { openReasoning, type ReasoningBlock } from './responses-reasoning.js';

/** What a chat tool name stands for in the Responses request: a function or custom tool, maybe in a namespace. */
export interface ToolName {
  readonly name: string;
  readonly kind: 'function' | 'custom';
  readonly namespace?: string;
}

/** The Responses request as a unified chat request, with what the translation left out. */
export interface TranslatedRequest {
  readonly chat: ChatRequest;
  /** Request fields (and input items) the provider cannot use, dropped (logged, listed in docs/protocols.md). */
  readonly dropped: string[];
  /** Built-in tools dropped because the provider does not run them (the `x-gateway-dropped-tools` header). */
  readonly droppedTools: string[];
  /** Chat tool names → the Responses tool they stand for. */
  readonly tools: ReadonlyMap<string, ToolName>;
}

export interface TranslateOptions {
  /** The provider the request goes to (reasoning is replayed only to the provider that signed it). */
  readonly provider: string;
  /** `refuse`: a built-in tool the provider cannot run is a 400 instead of being dropped. */
  readonly builtInTools: 'drop' | 'refuse';
}

/** Fields with no chat equivalent that change nothing the answer must satisfy: dropped. */
const DROPPED_FIELDS = ['truncation', 'top_logprobs', 'service_tier', 'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier', 'max_tool_calls', 'stream_options', 'context_management'];
/** Fields that need state at the provider (its stored prompts, conversations, background runs): only a native provider takes them. */
const NATIVE_ONLY = ['conversation', 'prompt', 'background'];

/** A custom tool's free-form input travels in chat as this one string argument. */
const CUSTOM_PARAMETERS = { type: 'object', properties: { input: { type: 'string', description: 'The tool input, as free-form text.' } }, required: ['input'], additionalProperties: false };

const chatName = (name: string, namespace: string | undefined): string => (namespace ? `${namespace}__${name}` : name);

const unsupported = (param: string, message: string) => errors.invalidRequest(message, { param, code: 'unsupported_parameter' });

/** `tools` as chat function tools; built-in ones are dropped (or refused). */
function translateTools(tools: readonly ResponsesTool[] | undefined, options: TranslateOptions, result: { dropped: string[]; droppedTools: string[] }) {
  const chatTools: Array<Record<string, unknown>> = [];
  const names = new Map<string, ToolName>();
  const add = (tool: ResponsesTool, param: string, namespace?: string) => {
    const name = chatName(String(tool.name), namespace);
    if (name.length > 64) throw errors.invalidRequest(`Invalid '${param}.name': with its namespace it makes a tool name longer than 64 characters, which this provider cannot take.`, { param: `${param}.name`, code: 'invalid_value' });
    const custom = tool.type === 'custom';
    const fn: Record<string, unknown> = { name, parameters: custom ? CUSTOM_PARAMETERS : (tool.parameters ?? { type: 'object', properties: {} }) };
    const description = custom && isRecord(tool.format) && tool.format.type === 'grammar' ? `${tool.description ?? ''}\nInput format (${String(tool.format.syntax)}):\n${String(tool.format.definition)}`.trim() : tool.description;
    if (typeof description === 'string') fn.description = description;
    if (!custom && typeof tool.strict === 'boolean') fn.strict = tool.strict;
    chatTools.push({ type: 'function', function: fn });
    names.set(name, { name: String(tool.name), kind: custom ? 'custom' : 'function', ...(namespace ? { namespace } : {}) });
  };
  (tools ?? []).forEach((tool, index) => {
    const param = `tools[${index}]`;
    if (tool.type === 'function' || tool.type === 'custom') add(tool, param);
    else if (tool.type === 'namespace') (tool.tools ?? []).forEach((inner, innerIndex) => add(inner, `${param}.tools[${innerIndex}]`, String(tool.name)));
    else if (options.builtInTools === 'refuse') {
      throw errors.invalidRequest(`The built-in tool "${tool.type}" cannot be run by the provider "${options.provider}".`, { param: `${param}.type`, code: 'unsupported_tool' });
    } else {
      result.droppedTools.push(tool.type);
      result.dropped.push(param);
    }
  });
  return { chatTools, names };
}

/** `tool_choice` for chat: `allowed_tools` narrows the tool list; a choice of a dropped built-in tool falls back to `auto`. */
function translateToolChoice(choice: unknown, chatTools: Array<Record<string, unknown>>, names: ReadonlyMap<string, ToolName>, dropped: string[]) {
  if (choice === undefined || choice === null || typeof choice === 'string') return { toolChoice: choice ?? undefined, chatTools };
  const entry = choice as Record<string, unknown>;
  const find = (name: unknown) => [...names].find(([, tool]) => tool.name === name)?.[0];
  if (entry.type === 'function' || entry.type === 'custom') return { toolChoice: { type: 'function', function: { name: find(entry.name) ?? entry.name } }, chatTools };
  if (entry.type === 'allowed_tools' && Array.isArray(entry.tools)) {
    const allowed = new Set(entry.tools.map((tool) => find((tool as Record<string, unknown>).name)).filter(Boolean));
    return { toolChoice: entry.mode ?? 'auto', chatTools: chatTools.filter((tool) => allowed.has((tool.function as { name: string }).name)) };
  }
  dropped.push('tool_choice');
  return { toolChoice: 'auto', chatTools };
}

/** Message content parts as chat parts. */
function chatParts(parts: readonly ContentPart[], param: string): Array<Record<string, unknown>> {
  return parts.map((part, index) => {
    const at = `${param}[${index}]`;
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        return { type: 'text', text: part.text };
      case 'refusal':
        return { type: 'text', text: String(part.refusal) };
      case 'input_image':
        if (typeof part.image_url !== 'string') throw unsupported(`${at}.file_id`, `Invalid '${at}': images by file_id need the provider's file store; send image_url (a data URL or an http(s) URL).`);
        return { type: 'image_url', image_url: part.detail ? { url: part.image_url, detail: part.detail } : { url: part.image_url } };
      case 'input_file': {
        if (typeof part.file_data === 'string') return { type: 'file', file: { file_data: part.file_data, ...(typeof part.filename === 'string' ? { filename: part.filename } : {}) } };
        if (typeof part.file_id === 'string') return { type: 'file', file: { file_id: part.file_id } };
        throw unsupported(`${at}.file_url`, `Invalid '${at}': files by URL are not supported by this provider; send file_data (a base64 data URL).`);
      }
      default:
        throw unsupported(`${at}.type`, `Invalid '${at}.type': the content part type "${String(part.type)}" is not supported by this provider.`);
    }
  });
}

/** Text of parts joined, for roles whose chat content is best a string (assistant turns, tool outputs). */
const joinedText = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((part) => (isRecord(part) ? String(part.text ?? part.refusal ?? '') : '')).join('') : '';

/** Builds the chat messages from the instructions and the conversation's items (history first). */
class MessageBuilder {
  readonly messages: ChatMessage[] = [];
  /** The assistant turn being built (calls and reasoning join it until another role speaks). */
  private assistant?: ChatMessage;

  constructor(
    private readonly options: TranslateOptions,
    private readonly names: ReadonlyMap<string, ToolName>,
    private readonly dropped: string[],
  ) {}

  private turn(): ChatMessage {
    if (!this.assistant) {
      this.assistant = { role: 'assistant', content: null };
      this.messages.push(this.assistant);
    }
    return this.assistant;
  }

  private push(message: ChatMessage): void {
    this.assistant = undefined;
    this.messages.push(message);
  }

  private chatToolName(name: string, namespace: unknown): string {
    return chatName(name, typeof namespace === 'string' ? namespace : undefined);
  }

  private call(call: ToolCall): void {
    const turn = this.turn();
    turn.tool_calls = [...(turn.tool_calls ?? []), call];
  }

  add(item: ResponseItem, param: string): void {
    const type = item.type ?? 'message';
    switch (type) {
      case 'message': {
        const role = item.role as ChatMessage['role'];
        if (role === 'assistant') {
          const turn = this.turn();
          const text = joinedText(item.content);
          turn.content = typeof turn.content === 'string' && turn.content ? turn.content + text : text;
          return;
        }
        const content = typeof item.content === 'string' ? item.content : chatParts(item.content ?? [], `${param}.content`);
        // System and developer turns take text only: their parts become one string.
        this.push({ role, content: role === 'user' ? content : joinedText(item.content) });
        return;
      }
      case 'function_call':
        this.call({ id: String(item.call_id), type: 'function', function: { name: this.chatToolName(String(item.name), item.namespace), arguments: String(item.arguments) } });
        return;
      case 'custom_tool_call':
        this.call({ id: String(item.call_id), type: 'function', function: { name: this.chatToolName(String(item.name), item.namespace), arguments: JSON.stringify({ input: item.input }) } });
        return;
      case 'function_call_output':
      case 'custom_tool_call_output':
        this.push({ role: 'tool', tool_call_id: String(item.call_id), content: joinedText(item.output) });
        return;
      case 'reasoning': {
        const blocks: ReasoningBlock[] | undefined = openReasoning(item.encrypted_content, this.options.provider);
        // Reasoning is replayed only to the provider that made (and signed) it; elsewhere it is left out.
        if (!blocks || blocks.length === 0) return;
        const turn = this.turn();
        turn.content_blocks = [...((turn.content_blocks as unknown[]) ?? []), ...blocks];
        return;
      }
      case 'item_reference':
        throw unsupported(`${param}.type`, `Invalid '${param}': item references are not supported; send the item itself, or use previous_response_id.`);
      default:
        // An item of a built-in tool the provider did not run (web_search_call, …).
        this.dropped.push(param);
    }
  }
}

/** The chat field for `text.format`. */
function responseFormat(format: unknown): Record<string, unknown> | undefined {
  if (!isRecord(format) || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const schema: Record<string, unknown> = { name: format.name, schema: format.schema };
  if (typeof format.description === 'string') schema.description = format.description;
  if (typeof format.strict === 'boolean') schema.strict = format.strict;
  return { type: 'json_schema', json_schema: schema };
}

/**
 * Translates a Responses request to the unified chat request a provider without the native API
 * takes. `history` is the conversation of `previous_response_id` (its input and output items, in
 * order), rebuilt by the gateway. Nothing is refused that can be dropped without changing what the
 * answer must be; what is dropped is returned.
 */
export function toChatRequest(request: ResponsesRequest, history: readonly ResponseItem[], options: TranslateOptions): TranslatedRequest {
  const result = { dropped: [] as string[], droppedTools: [] as string[] };
  for (const field of NATIVE_ONLY) {
    if (request[field] !== undefined && request[field] !== null && request[field] !== false) {
      throw unsupported(field, `'${field}' needs a provider that speaks the Responses API natively; "${options.provider}" does not.`);
    }
  }
  const { chatTools, names } = translateTools(request.tools, options, result);
  const builder = new MessageBuilder(options, names, result.dropped);
  if (typeof request.instructions === 'string' && request.instructions) builder.messages.push({ role: 'system', content: request.instructions });
  history.forEach((item, index) => builder.add(item, `previous_response_id(${index})`));
  if (typeof request.input === 'string') builder.messages.push({ role: 'user', content: request.input });
  else (request.input ?? []).forEach((item, index) => builder.add(item, `input[${index}]`));

  const chat: ChatRequest = { model: request.model, messages: builder.messages };
  const choice = translateToolChoice(request.tool_choice, chatTools, names, result.dropped);
  if (choice.chatTools.length > 0) {
    chat.tools = choice.chatTools;
    if (choice.toolChoice !== undefined) chat.tool_choice = choice.toolChoice;
    if (typeof request.parallel_tool_calls === 'boolean') chat.parallel_tool_calls = request.parallel_tool_calls;
  }
  const format = responseFormat(request.text?.format);
  if (format) chat.response_format = format;
  if (typeof request.reasoning?.effort === 'string') chat.reasoning_effort = request.reasoning.effort;
  if (typeof request.max_output_tokens === 'number') chat.max_tokens = request.max_output_tokens;
  if (typeof request.temperature === 'number') chat.temperature = request.temperature;
  if (typeof request.top_p === 'number') chat.top_p = request.top_p;
  if (typeof request.user === 'string') chat.user = request.user;
  if (request.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  for (const field of DROPPED_FIELDS) if (request[field] !== undefined && request[field] !== null) result.dropped.push(field);
  if (typeof request.text?.verbosity === 'string') result.dropped.push('text.verbosity');
  if (request.reasoning?.summary) result.dropped.push('reasoning.summary');
  return { chat, dropped: result.dropped, droppedTools: result.droppedTools, tools: names };
}
