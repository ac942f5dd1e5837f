import { AUDIO_MEDIA_TYPES, type ChatMessage, type ChatRequest, type ContentPartSupport, errors, isRecord, readFilePart } from '../../../core/spec/index.js';
import { parseDataUrl, THINKING_BUDGET_BY_EFFORT, toolInput } from '../../shared/chat-mapping.js';
import { splitCallId } from './google-chat-response.js';
import { cleanGeminiSchema, geminiParameters } from './google-schema.js';

export type GeminiPart =
  | { text: string; thought?: boolean; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  | { functionCall: { name: string; args: Record<string, unknown>; id?: string }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

/** `generateContent` body (both Google AI Studio and Vertex AI). */
export interface GeminiRequestBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: Array<{ functionDeclarations: Array<{ name: string; description?: string; parameters?: Record<string, unknown> }> }>;
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
  generationConfig?: Record<string, unknown>;
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};



/** The text of a string content or of its `text` parts. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { type: string; text: string } => isRecord(part) && typeof part.text === 'string' && (part.type === 'text' || part.type === 'refusal'))
    .map((part) => part.text)
    .join('');
}

function imagePart(url: string, param: string): GeminiPart {
  const data = parseDataUrl(url);
  if (data) return { inlineData: { mimeType: data.mediaType, data: data.data } };
  if (/^(https?|gs):\/\//i.test(url)) {
    const extension = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
    return { fileData: { mimeType: MIME_BY_EXTENSION[extension ?? ''] ?? 'image/jpeg', fileUri: url } };
  }
  throw errors.invalidRequest(`Invalid '${param}': expected a base64 data URL or an http(s):// or gs:// URL.`, { param, code: 'invalid_value' });
}

/** Gemini takes files of any media type inline (the upstream judges them) and audio; OpenAI file ids it cannot resolve. */
export const GOOGLE_CONTENT_PARTS: ContentPartSupport = { file: { mediaTypes: '*', fileId: false }, inputAudio: true };

/** A `file` or `input_audio` part as inline data. */
function inlinePart(part: Record<string, unknown>, param: string): GeminiPart {
  if (part.type === 'input_audio' && isRecord(part.input_audio)) {
    const mimeType = AUDIO_MEDIA_TYPES[String(part.input_audio.format)];
    if (mimeType && typeof part.input_audio.data === 'string') return { inlineData: { mimeType, data: part.input_audio.data } };
  }
  const inline = part.type === 'file' ? readFilePart(part).inline : undefined;
  if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
  // The core refused other parts already (GOOGLE_CONTENT_PARTS); this guards a direct caller of the mapper.
  throw errors.invalidRequest(`Invalid '${param}': only files given as file_data and wav or mp3 audio are taken.`, { param, code: 'unsupported_content_part' });
}

function userParts(content: unknown, param: string): GeminiPart[] {
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((part, index): GeminiPart => {
    const at = `${param}[${index}]`;
    if (!isRecord(part)) throw errors.invalidRequest(`Invalid '${at}': expected a content part.`, { param: at, code: 'invalid_value' });
    if (part.type === 'text') return { text: String(part.text ?? '') };
    if (part.type === 'image_url' && isRecord(part.image_url) && typeof part.image_url.url === 'string') return imagePart(part.image_url.url, `${at}.image_url.url`);
    if (part.type === 'file' || part.type === 'input_audio') return inlinePart(part, at);
    throw errors.invalidRequest(`Invalid '${at}.type': the content part type "${String(part.type)}" is not supported by this provider.`, {
      param: `${at}.type`,
      code: 'invalid_value',
    });
  });
}

function functionResponse(content: unknown): Record<string, unknown> {
  const text = textOf(content);
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) return parsed;
  } catch {
    // plain text result
  }
  return { content: text };
}

function assistantParts(message: ChatMessage): GeminiPart[] {
  const parts: GeminiPart[] = [];
  const text = textOf(message.content);
  if (text) parts.push({ text });
  for (const call of message.tool_calls ?? []) {
    const { thoughtSignature } = splitCallId(call.id);
    const part: GeminiPart = { functionCall: { name: call.function.name, args: toolInput(call.function.arguments) } };
    parts.push(thoughtSignature ? { ...part, thoughtSignature } : part);
  }
  const legacy = message.function_call;
  if (isRecord(legacy) && typeof legacy.name === 'string') {
    parts.push({ functionCall: { name: legacy.name, args: toolInput(String(legacy.arguments ?? '{}')) } });
  }
  return parts;
}

/** Maps the unified messages to Gemini `contents` and the system instruction; same-role turns are merged. */
export function geminiContents(messages: ChatMessage[]): Pick<GeminiRequestBody, 'contents' | 'systemInstruction'> {
  const system: Array<{ text: string }> = [];
  const contents: GeminiContent[] = [];
  const toolNames = new Map<string, string>();
  const push = (role: GeminiContent['role'], parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  messages.forEach((message, index) => {
    const at = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push({ text: textOf(message.content) });
        break;
      case 'user':
        push('user', userParts(message.content, `${at}.content`));
        break;
      case 'assistant':
        for (const call of message.tool_calls ?? []) toolNames.set(call.id, call.function.name);
        push('model', assistantParts(message));
        break;
      case 'tool': {
        const name = toolNames.get(message.tool_call_id ?? '') ?? message.name ?? message.tool_call_id ?? 'tool';
        push('user', [{ functionResponse: { name, response: functionResponse(message.content) } }]);
        break;
      }
      case 'function':
        push('user', [{ functionResponse: { name: message.name ?? 'function', response: functionResponse(message.content) } }]);
        break;
    }
  });
  return system.length > 0 ? { contents, systemInstruction: { parts: system } } : { contents };
}

function toolConfig(choice: unknown): GeminiRequestBody['toolConfig'] {
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  }
  return undefined;
}

function declarations(request: ChatRequest): GeminiRequestBody['tools'] {
  const tools = Array.isArray(request.tools) ? request.tools : [];
  const legacy = Array.isArray(request.functions) ? request.functions.map((fn) => ({ type: 'function', function: fn })) : [];
  const functions = [...tools, ...legacy]
    .filter((tool): tool is { type: string; function: Record<string, unknown> } => isRecord(tool) && tool.type === 'function' && isRecord(tool.function))
    .map(({ function: fn }) => {
      const declaration: { name: string; description?: string; parameters?: Record<string, unknown> } = { name: String(fn.name) };
      if (typeof fn.description === 'string') declaration.description = fn.description;
      const parameters = geminiParameters(fn.parameters);
      if (parameters) declaration.parameters = parameters;
      return declaration;
    });
  return functions.length > 0 ? [{ functionDeclarations: functions }] : undefined;
}

function generationConfig(request: ChatRequest): Record<string, unknown> | undefined {
  const config: Record<string, unknown> = {};
  const copy = (from: string, to: string) => {
    const value = request[from];
    if (typeof value === 'number') config[to] = value;
  };
  copy('temperature', 'temperature');
  copy('top_p', 'topP');
  copy('top_k', 'topK');
  copy('max_tokens', 'maxOutputTokens');
  copy('max_completion_tokens', 'maxOutputTokens');
  copy('n', 'candidateCount');
  copy('presence_penalty', 'presencePenalty');
  copy('frequency_penalty', 'frequencyPenalty');
  copy('seed', 'seed');
  const stop = request.stop;
  if (typeof stop === 'string') config.stopSequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) config.stopSequences = stop;
  const format = request.response_format;
  if (isRecord(format) && format.type === 'json_object') config.responseMimeType = 'application/json';
  if (isRecord(format) && format.type === 'json_schema' && isRecord(format.json_schema)) {
    config.responseMimeType = 'application/json';
    if (isRecord(format.json_schema.schema)) config.responseSchema = cleanGeminiSchema(format.json_schema.schema);
  }
  const thinking = request.thinking;
  if (thinking?.type === 'enabled') {
    config.thinkingConfig = thinking.budget_tokens === undefined ? { includeThoughts: true } : { includeThoughts: true, thinkingBudget: thinking.budget_tokens };
  } else if (thinking?.type === 'disabled') {
    config.thinkingConfig = { thinkingBudget: 0 };
  } else if (typeof request.reasoning_effort === 'string' && request.reasoning_effort in THINKING_BUDGET_BY_EFFORT) {
    config.thinkingConfig = { thinkingBudget: THINKING_BUDGET_BY_EFFORT[request.reasoning_effort] };
  }
  return Object.keys(config).length > 0 ? config : undefined;
}

/** The unified chat request as a Gemini `generateContent` body. */
export function toGeminiBody(request: ChatRequest): GeminiRequestBody {
  const body: GeminiRequestBody = { ...geminiContents(request.messages) };
  const tools = declarations(request);
  if (tools) body.tools = tools;
  const choice = toolConfig(request.tool_choice ?? (request.function_call === 'none' ? 'none' : undefined));
  if (choice && (tools || choice.functionCallingConfig.mode === 'NONE')) body.toolConfig = choice;
  const config = generationConfig(request);
  if (config) body.generationConfig = config;
  return body;
}
