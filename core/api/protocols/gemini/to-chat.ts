import { errors, type GatewayError } from '../../../errors.js';
import type { GeminiContent, GeminiPart, GeminiRequest } from '../../../spec/gemini.js';
import { isRecord } from '../../../spec/is-record.js';
import type { ContentPartSupport } from '../../../spec/content-parts.js';
import type { ChatExtension } from '../../../spec/provider.js';
import type { ChatMessage, ChatRequest, ToolCall } from '../../../spec/unified.js';

/** A Gemini request as the unified chat request, and the fields the translation dropped (for the log). */
export interface ChatTranslation {
  readonly request: ChatRequest;
  readonly dropped: readonly string[];
}

/** Top-level fields the translation reads; any other is dropped and recorded. */
const MAPPED = new Set(['model', 'stream', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent']);
/** `generationConfig` fields the translation maps. */
const CONFIG_MAPPED = new Set([
  'temperature',
  'topP',
  'topK',
  'maxOutputTokens',
  'stopSequences',
  'candidateCount',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  '_responseJsonSchema',
  'thinkingConfig',
]);
/** Inline audio types chat's `input_audio` part takes, by its `format`. */
const AUDIO_FORMATS: Readonly<Record<string, string>> = { 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/mp3': 'mp3', 'audio/mpeg': 'mp3' };

type Part = Record<string, unknown>;

/** A call id for a function call the client did not name (Gemini's calls usually have none), stable within the request. */
const callIdOf = (content: number, part: number): string => `call_g${content}_${part}`;

/**
 * Google's OpenAPI-subset schema (`responseSchema`, a declaration's `parameters`) as JSON Schema: its
 * upper-case type names in lower case, `nullable` as a type union; the rest as written.
 */
export function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (key === 'nullable') continue;
    else if (key === 'properties' && isRecord(value)) out.properties = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, jsonSchemaOf(inner)]));
    else if (key === 'items' || key === 'anyOf' || key === 'oneOf' || key === 'allOf') out[key] = jsonSchemaOf(value);
    else if (key === 'propertyOrdering') continue;
    else out[key] = value;
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

class Translation {
  readonly dropped = new Set<string>();
  readonly messages: ChatMessage[] = [];
  /** Function calls of the last model turn not yet answered, for responses that name no id. */
  private pending: Array<{ id: string; name: string }> = [];

  constructor(
    private readonly provider: string,
    private readonly support: ContentPartSupport,
  ) {}

  drop(field: string): void {
    this.dropped.add(field);
  }

  refuse(param: string, what: string): GatewayError {
    return errors.invalidRequest(`The provider "${this.provider}" cannot take ${what} (${param}).`, { param, code: 'unsupported_content' });
  }

  /** A user part as a chat content part; undefined when it is dropped. */
  private part(part: GeminiPart, param: string): Part | undefined {
    if (typeof part.text === 'string') {
      if (part.thought === true) {
        this.drop('contents.parts.thought');
        return undefined;
      }
      return { type: 'text', text: part.text };
    }
    if (isRecord(part.inlineData)) {
      const mime = String(part.inlineData.mimeType ?? '');
      const data = String(part.inlineData.data ?? '');
      if (mime.startsWith('image/')) return { type: 'image_url', image_url: { url: `data:${mime};base64,${data}` } };
      if (mime.startsWith('text/')) return { type: 'text', text: Buffer.from(data, 'base64').toString('utf8') };
      // Audio and documents reach only a provider that declared the chat part (capabilities.contentParts).
      if (AUDIO_FORMATS[mime] && this.support.inputAudio) return { type: 'input_audio', input_audio: { data, format: AUDIO_FORMATS[mime] } };
      const files = this.support.file?.mediaTypes;
      if (!AUDIO_FORMATS[mime] && files && (files === '*' || files.includes(mime))) {
        return { type: 'file', file: { file_data: `data:${mime};base64,${data}`, filename: mime === 'application/pdf' ? 'document.pdf' : 'file' } };
      }
      throw this.refuse(`${param}.inlineData`, `inline data of type "${mime}"`);
    }
    if (isRecord(part.fileData)) {
      const mime = String(part.fileData.mimeType ?? '');
      const uri = String(part.fileData.fileUri ?? '');
      if (/^https?:\/\//.test(uri) && (mime.startsWith('image/') || mime === '')) return { type: 'image_url', image_url: { url: uri } };
      throw this.refuse(`${param}.fileData`, `a file given by URI ("${mime || 'no mimeType'}"); send its bytes as inlineData instead`);
    }
    for (const field of Object.keys(part)) if (field !== 'thoughtSignature') this.drop(`contents.parts.${field}`);
    return undefined;
  }

  system(content: GeminiContent | string | undefined): void {
    if (content === undefined) return;
    const text = typeof content === 'string' ? content : content.parts.map((part) => (typeof part.text === 'string' ? part.text : '')).filter(Boolean).join('\n');
    if (text) this.messages.push({ role: 'system', content: text });
  }

  user(content: GeminiContent, param: string): void {
    const parts: Part[] = [];
    content.parts.forEach((part, index) => {
      const at = `${param}.parts[${index}]`;
      if (isRecord(part.functionResponse)) {
        this.toolResult(part.functionResponse as NonNullable<GeminiPart['functionResponse']>);
        return;
      }
      const mapped = this.part(part, at);
      if (mapped) parts.push(mapped);
    });
    if (parts.length === 0) return;
    const only = parts.length === 1 && parts[0].type === 'text' ? parts[0].text : undefined;
    this.messages.push({ role: 'user', content: typeof only === 'string' ? only : parts });
  }

  private toolResult(response: NonNullable<GeminiPart['functionResponse']>): void {
    const name = String(response.name ?? '');
    let id = typeof response.id === 'string' && response.id ? response.id : undefined;
    const at = this.pending.findIndex((call) => (id ? call.id === id : call.name === name));
    if (at !== -1) {
      id = this.pending[at].id;
      this.pending.splice(at, 1);
    }
    const value = response.response;
    // `{"output": "…"}` and `{"content": "…"}` are how the SDKs wrap a plain result; the rest is sent as JSON.
    const text = isRecord(value) && Object.keys(value).length === 1 && typeof (value.output ?? value.content ?? value.result) === 'string' ? String(value.output ?? value.content ?? value.result) : JSON.stringify(value ?? {});
    this.messages.push({ role: 'tool', tool_call_id: id ?? `call_${name}`, content: text });
  }

  model(content: GeminiContent, index: number): void {
    let text = '';
    const toolCalls: ToolCall[] = [];
    this.pending = [];
    content.parts.forEach((part, partIndex) => {
      if (typeof part.text === 'string') {
        // Thoughts are the provider's own; another provider cannot read them back.
        if (part.thought === true) this.drop('contents.parts.thought');
        else text += part.text;
      } else if (isRecord(part.functionCall)) {
        const call = part.functionCall as NonNullable<GeminiPart['functionCall']>;
        const id = typeof call.id === 'string' && call.id ? call.id : callIdOf(index, partIndex);
        const name = String(call.name ?? '');
        toolCalls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(call.args ?? {}) } });
        this.pending.push({ id, name });
      } else {
        for (const field of Object.keys(part)) if (field !== 'thoughtSignature') this.drop(`contents.parts.${field}`);
      }
      if (part.thoughtSignature !== undefined) this.drop('contents.parts.thoughtSignature');
    });
    const message: ChatMessage = { role: 'assistant', content: text || (toolCalls.length > 0 ? null : '') };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    this.messages.push(message);
  }
}

function tools(request: GeminiRequest, translation: Translation): unknown[] | undefined {
  if (!Array.isArray(request.tools)) return undefined;
  const mapped: unknown[] = [];
  for (const tool of request.tools) {
    for (const [kind, value] of Object.entries(tool)) {
      if (kind !== 'functionDeclarations') {
        // Google runs these (googleSearch, codeExecution, urlContext, …): no chat equivalent.
        translation.drop(`tools.${kind}`);
        continue;
      }
      for (const declaration of Array.isArray(value) ? (value as Array<Record<string, unknown>>) : []) {
        const parameters = declaration.parametersJsonSchema ?? (declaration.parameters === undefined ? { type: 'object', properties: {} } : jsonSchemaOf(declaration.parameters));
        const fn: Record<string, unknown> = { name: declaration.name, parameters };
        if (typeof declaration.description === 'string') fn.description = declaration.description;
        if (declaration.response !== undefined || declaration.responseJsonSchema !== undefined) translation.drop('tools.functionDeclarations.response');
        if (declaration.behavior !== undefined) translation.drop('tools.functionDeclarations.behavior');
        mapped.push({ type: 'function', function: fn });
      }
    }
  }
  return mapped.length > 0 ? mapped : undefined;
}

function toolConfig(request: GeminiRequest, chat: ChatRequest, translation: Translation): void {
  const config = request.toolConfig;
  if (!config) return;
  for (const field of Object.keys(config)) if (field !== 'functionCallingConfig') translation.drop(`toolConfig.${field}`);
  const calling = isRecord(config.functionCallingConfig) ? config.functionCallingConfig : undefined;
  if (!calling) return;
  const mode = String(calling.mode ?? 'AUTO');
  const allowed = Array.isArray(calling.allowedFunctionNames) ? (calling.allowedFunctionNames as unknown[]).map(String) : [];
  if (mode === 'NONE') chat.tool_choice = 'none';
  else if (!chat.tools) translation.drop('toolConfig');
  else if (mode === 'ANY') {
    if (allowed.length === 1) chat.tool_choice = { type: 'function', function: { name: allowed[0] } };
    else {
      chat.tool_choice = 'required';
      if (allowed.length > 1) translation.drop('toolConfig.functionCallingConfig.allowedFunctionNames');
    }
  } else {
    chat.tool_choice = 'auto';
    if (mode === 'VALIDATED') translation.drop('toolConfig.functionCallingConfig.mode');
    if (allowed.length > 0) translation.drop('toolConfig.functionCallingConfig.allowedFunctionNames');
  }
}

function generationConfig(request: GeminiRequest, chat: ChatRequest, extensions: readonly ChatExtension[], translation: Translation): void {
  const config = request.generationConfig;
  if (!config) return;
  if (typeof config.temperature === 'number') chat.temperature = config.temperature;
  if (typeof config.topP === 'number') chat.top_p = config.topP;
  if (typeof config.topK === 'number') {
    if (extensions.includes('top_k')) chat.top_k = config.topK;
    else translation.drop('generationConfig.topK');
  }
  if (typeof config.maxOutputTokens === 'number') chat.max_tokens = config.maxOutputTokens;
  if (Array.isArray(config.stopSequences) && config.stopSequences.length > 0) chat.stop = config.stopSequences as string[];
  if (typeof config.candidateCount === 'number' && config.candidateCount > 1) chat.n = config.candidateCount;
  if (typeof config.seed === 'number') chat.seed = config.seed;
  if (typeof config.presencePenalty === 'number') chat.presence_penalty = config.presencePenalty;
  if (typeof config.frequencyPenalty === 'number') chat.frequency_penalty = config.frequencyPenalty;
  const jsonSchema = config.responseJsonSchema ?? config._responseJsonSchema;
  const schema = jsonSchema ?? (config.responseSchema === undefined ? undefined : jsonSchemaOf(config.responseSchema));
  if (schema !== undefined) chat.response_format = { type: 'json_schema', json_schema: { name: 'response', schema, strict: false } };
  else if (config.responseMimeType === 'application/json') chat.response_format = { type: 'json_object' };
  else if (config.responseMimeType !== undefined && config.responseMimeType !== 'text/plain') {
    throw translation.refuse('generationConfig.responseMimeType', `responseMimeType "${String(config.responseMimeType)}"`);
  }
  const thinking = isRecord(config.thinkingConfig) ? config.thinkingConfig : undefined;
  if (thinking) {
    if (!extensions.includes('thinking')) translation.drop('generationConfig.thinkingConfig');
    else if (thinking.thinkingBudget === 0) chat.thinking = { type: 'disabled' };
    else if (typeof thinking.thinkingBudget === 'number' && thinking.thinkingBudget > 0) chat.thinking = { type: 'enabled', budget_tokens: thinking.thinkingBudget };
    else chat.thinking = { type: 'enabled' };
    if (thinking.thinkingLevel !== undefined && extensions.includes('thinking')) translation.drop('generationConfig.thinkingConfig.thinkingLevel');
  }
  for (const field of Object.keys(config)) if (!CONFIG_MAPPED.has(field)) translation.drop(`generationConfig.${field}`);
}

/**
 * Translates a validated Gemini request into the unified chat request for a provider without the
 * Gemini API natively (`provider` names it in errors). What chat has no place for is dropped and
 * listed (safety settings, Google's built-in tools, thoughts); what the provider could never do
 * (a cached content, a file URI, an output type it cannot produce, audio or a document it did not
 * declare in `support`) is a 400 naming provider and field. `extensions` are the unified fields
 * beyond OpenAI's the provider's chat adapter reads.
 */
export function chatRequestOf(request: GeminiRequest, provider: string, extensions: readonly ChatExtension[], support: ContentPartSupport = {}): ChatTranslation {
  const translation = new Translation(provider, support);
  if (request.cachedContent !== undefined) throw translation.refuse('cachedContent', 'a cached content, which only Google keeps');
  translation.system(request.systemInstruction);
  request.contents.forEach((content, index) => {
    if (content.role === 'model') translation.model(content, index);
    else translation.user(content, `contents[${index}]`);
  });
  const chat: ChatRequest = { model: request.model, messages: translation.messages };
  if (request.stream !== undefined) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  const mappedTools = tools(request, translation);
  if (mappedTools) chat.tools = mappedTools as ChatRequest['tools'];
  toolConfig(request, chat, translation);
  generationConfig(request, chat, extensions, translation);
  if (Array.isArray(request.safetySettings) && request.safetySettings.length > 0) translation.drop('safetySettings');
  for (const field of Object.keys(request)) if (!MAPPED.has(field)) translation.drop(field);
  return { request: chat, dropped: [...translation.dropped] };
}

/** The Gemini field a chat field comes from, to name it in a provider's refusal. */
const GEMINI_FIELD: Readonly<Record<string, string>> = {
  response_format: 'generationConfig.responseSchema',
  n: 'generationConfig.candidateCount',
  top_k: 'generationConfig.topK',
  stop: 'generationConfig.stopSequences',
  seed: 'generationConfig.seed',
  presence_penalty: 'generationConfig.presencePenalty',
  frequency_penalty: 'generationConfig.frequencyPenalty',
  max_tokens: 'generationConfig.maxOutputTokens',
  temperature: 'generationConfig.temperature',
  top_p: 'generationConfig.topP',
  thinking: 'generationConfig.thinkingConfig',
  tools: 'tools',
  tool_choice: 'toolConfig',
};

/**
 * A chat adapter's refusal of the translated request (`validate`), re-worded for the Gemini caller:
 * the provider and the Gemini field named, nothing sent upstream.
 */
export function geminiRefusal(error: unknown, provider: string, request: GeminiRequest): unknown {
  if (!(error instanceof Error) || !('status' in error) || (error as GatewayError).status !== 400) return error;
  const body = (error as GatewayError).body;
  const param = body.param ?? '';
  const top = param.split(/[.[]/)[0];
  let field = GEMINI_FIELD[top];
  if (top === 'response_format' && request.generationConfig?.responseSchema === undefined && request.generationConfig?.responseJsonSchema === undefined) field = 'generationConfig.responseMimeType';
  if (!field) return error;
  return errors.invalidRequest(`The provider "${provider}" cannot take ${field}: ${body.message}`, { param: field, code: body.code ?? 'unsupported_parameter' });
}
