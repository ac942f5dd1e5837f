import { isRecord } from '../../../spec/is-record.js';
import type { ResponsesRequest } from '../../../spec/responses.js';
import {
  describe,
  invalid,
  optionalBoolean,
  optionalEnum,
  optionalNumber,
  optionalString,
  requireName,
  requireObject,
  requireString,
} from '../../validate.js';

/** What `include` may ask for (OpenAI's `ResponseIncludable`). */
const INCLUDABLE = [
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
];
const ROLES = ['user', 'assistant', 'system', 'developer'];
const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];

const nullableString = (value: unknown, param: string): void => {
  if (value !== null) optionalString(value, param);
};

/** A message's content: a string or content parts of the types the role may send. */
function validateContent(value: unknown, param: string, role: string): void {
  if (typeof value === 'string') return;
  if (value === undefined) throw invalid('is required.', { param });
  if (!Array.isArray(value)) throw invalid(`expected a string or an array of content parts, got ${describe(value)}.`, { param });
  const allowed = role === 'assistant' ? ['output_text', 'refusal', 'input_text'] : ['input_text', 'input_image', 'input_file'];
  value.forEach((entry, index) => {
    const at = `${param}[${index}]`;
    const part = requireObject(entry, at);
    if (part.type === undefined) throw invalid('is required.', { param: `${at}.type` });
    optionalEnum(part.type, `${at}.type`, allowed);
    if (part.type === 'input_text' || part.type === 'output_text') requireString(part.text, `${at}.text`);
    else if (part.type === 'refusal') requireString(part.refusal, `${at}.refusal`);
    else if (part.type === 'input_image') {
      if (part.image_url === undefined && part.file_id === undefined) throw invalid("needs 'image_url' or 'file_id'.", { param: at });
      nullableString(part.image_url, `${at}.image_url`);
      nullableString(part.file_id, `${at}.file_id`);
      optionalEnum(part.detail, `${at}.detail`, ['auto', 'low', 'high']);
    } else if (part.type === 'input_file') {
      if (part.file_data === undefined && part.file_id === undefined && part.file_url === undefined) throw invalid("needs 'file_data', 'file_id' or 'file_url'.", { param: at });
      for (const field of ['file_data', 'file_id', 'file_url', 'filename']) nullableString(part[field], `${at}.${field}`);
    }
  });
}

/** A function call's or custom tool call's output: a string, or content parts. */
function validateOutput(value: unknown, param: string): void {
  if (typeof value === 'string') return;
  if (value === undefined) throw invalid('is required.', { param });
  if (!Array.isArray(value)) throw invalid(`expected a string or an array of content parts, got ${describe(value)}.`, { param });
  validateContent(value, param, 'user');
}

function validateItem(value: unknown, index: number): void {
  const at = `input[${index}]`;
  const item = requireObject(value, at);
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  if (type === undefined) throw invalid('is required.', { param: `${at}.type` });
  if (typeof type !== 'string') throw invalid(`expected a string, got ${describe(type)}.`, { param: `${at}.type` });
  optionalString(item.id, `${at}.id`);
  switch (type) {
    case 'message':
      if (item.role === undefined) throw invalid('is required.', { param: `${at}.role` });
      optionalEnum(item.role, `${at}.role`, ROLES);
      validateContent(item.content, `${at}.content`, item.role as string);
      break;
    case 'function_call':
      requireString(item.call_id, `${at}.call_id`);
      requireString(item.name, `${at}.name`);
      requireString(item.arguments, `${at}.arguments`);
      optionalString(item.namespace, `${at}.namespace`);
      break;
    case 'custom_tool_call':
      requireString(item.call_id, `${at}.call_id`);
      requireString(item.name, `${at}.name`);
      requireString(item.input, `${at}.input`);
      optionalString(item.namespace, `${at}.namespace`);
      break;
    case 'function_call_output':
    case 'custom_tool_call_output':
      requireString(item.call_id, `${at}.call_id`);
      validateOutput(item.output, `${at}.output`);
      break;
    case 'reasoning':
      if (item.summary !== undefined && !Array.isArray(item.summary)) throw invalid(`expected an array, got ${describe(item.summary)}.`, { param: `${at}.summary` });
      nullableString(item.encrypted_content, `${at}.encrypted_content`);
      break;
    case 'item_reference':
      requireString(item.id, `${at}.id`);
      break;
    default:
    // Items of built-in tools (web_search_call, …): carried to a provider that runs them, else dropped.
  }
}

function validateInput(value: unknown, previous: unknown): void {
  if (value === undefined) {
    if (previous === undefined || previous === null) throw invalid('is required (unless previous_response_id is given).', { param: 'input' });
    return;
  }
  if (typeof value === 'string') return;
  if (!Array.isArray(value)) throw invalid(`expected a string or an array of items, got ${describe(value)}.`, { param: 'input' });
  value.forEach(validateItem);
}

/** Function and custom tools (also inside a namespace); returns their names. */
function validateTool(value: unknown, at: string, names: Set<string>, nested: boolean): void {
  const tool = requireObject(value, at);
  if (tool.type === undefined) throw invalid('is required.', { param: `${at}.type` });
  if (typeof tool.type !== 'string') throw invalid(`expected a string, got ${describe(tool.type)}.`, { param: `${at}.type` });
  if (nested) optionalEnum(tool.type, `${at}.type`, ['function', 'custom']);
  if (tool.type === 'function' || tool.type === 'custom') {
    names.add(requireName(tool.name, `${at}.name`));
    nullableString(tool.description, `${at}.description`);
  }
  if (tool.type === 'function') {
    if (tool.parameters !== undefined && tool.parameters !== null) requireObject(tool.parameters, `${at}.parameters`);
    optionalBoolean(tool.strict, `${at}.strict`, true);
  } else if (tool.type === 'custom') {
    if (tool.format !== undefined) requireObject(tool.format, `${at}.format`);
  } else if (tool.type === 'namespace') {
    requireName(tool.name, `${at}.name`);
    if (!Array.isArray(tool.tools)) throw invalid(`expected an array, got ${describe(tool.tools)}.`, { param: `${at}.tools` });
    tool.tools.forEach((inner, index) => validateTool(inner, `${at}.tools[${index}]`, names, true));
  }
}

function validateTools(value: unknown): Set<string> {
  const names = new Set<string>();
  if (value === undefined || value === null) return names;
  if (!Array.isArray(value)) throw invalid(`expected an array, got ${describe(value)}.`, { param: 'tools' });
  value.forEach((tool, index) => validateTool(tool, `tools[${index}]`, names, false));
  return names;
}

function validateToolChoice(value: unknown, names: Set<string>): void {
  if (value === undefined || value === null || typeof value === 'string') {
    if (typeof value === 'string') optionalEnum(value, 'tool_choice', ['none', 'auto', 'required']);
    return;
  }
  const choice = requireObject(value, 'tool_choice');
  requireString(choice.type, 'tool_choice.type');
  if (choice.type === 'function' || choice.type === 'custom') {
    const name = requireString(choice.name, 'tool_choice.name');
    if (!names.has(name)) throw invalid(`names no tool in tools: "${name}".`, { param: 'tool_choice.name' });
  } else if (choice.type === 'allowed_tools') {
    optionalEnum(choice.mode, 'tool_choice.mode', ['auto', 'required']);
    if (!Array.isArray(choice.tools)) throw invalid(`expected an array, got ${describe(choice.tools)}.`, { param: 'tool_choice.tools' });
    choice.tools.forEach((tool, index) => requireObject(tool, `tool_choice.tools[${index}]`));
  }
}

function validateText(value: unknown): void {
  if (value === undefined || value === null) return;
  const text = requireObject(value, 'text');
  optionalEnum(text.verbosity ?? undefined, 'text.verbosity', ['low', 'medium', 'high']);
  if (text.format === undefined || text.format === null) return;
  const format = requireObject(text.format, 'text.format');
  if (format.type === undefined) throw invalid('is required.', { param: 'text.format.type' });
  optionalEnum(format.type, 'text.format.type', ['text', 'json_object', 'json_schema']);
  if (format.type !== 'json_schema') return;
  requireName(format.name, 'text.format.name');
  requireObject(format.schema, 'text.format.schema');
  nullableString(format.description, 'text.format.description');
  optionalBoolean(format.strict, 'text.format.strict', true);
}

function validateReasoning(value: unknown): void {
  if (value === undefined || value === null) return;
  const reasoning = requireObject(value, 'reasoning');
  optionalEnum(reasoning.effort ?? undefined, 'reasoning.effort', EFFORTS);
  optionalEnum(reasoning.summary ?? undefined, 'reasoning.summary', ['auto', 'concise', 'detailed']);
  optionalEnum(reasoning.generate_summary ?? undefined, 'reasoning.generate_summary', ['auto', 'concise', 'detailed']);
}

/** `metadata`: up to 16 string values, keys up to 64 characters, values up to 512. */
function validateMetadata(value: unknown): void {
  if (value === undefined || value === null) return;
  const metadata = requireObject(value, 'metadata');
  const keys = Object.keys(metadata);
  if (keys.length > 16) throw invalid(`must hold at most 16 keys, got ${keys.length}.`, { param: 'metadata' });
  for (const key of keys) {
    if (key.length > 64) throw invalid(`keys must be at most 64 characters, got one of ${key.length}.`, { param: 'metadata' });
    requireString(metadata[key], `metadata.${key}`, { max: 512 });
  }
}

function validateInclude(value: unknown): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) throw invalid(`expected an array, got ${describe(value)}.`, { param: 'include' });
  value.forEach((entry, index) => optionalEnum(entry, `include[${index}]`, INCLUDABLE));
}

/**
 * Validates a `POST /v1/responses` body field by field (400 naming the first bad field with its
 * path, as chat does). Unknown top-level fields are kept: a provider that speaks the Responses API
 * natively receives them; the translation to chat lists what it drops.
 */
export function validateResponsesRequest(body: Record<string, unknown>): ResponsesRequest {
  requireString(body.model, 'model', { nonEmpty: true });
  validateInput(body.input, body.previous_response_id);
  nullableString(body.instructions, 'instructions');
  const names = validateTools(body.tools);
  validateToolChoice(body.tool_choice, names);
  optionalBoolean(body.parallel_tool_calls, 'parallel_tool_calls', true);
  validateText(body.text);
  validateReasoning(body.reasoning);
  optionalNumber(body.max_output_tokens, 'max_output_tokens', { min: 1, integer: true, nullable: true });
  optionalNumber(body.max_tool_calls, 'max_tool_calls', { min: 1, integer: true, nullable: true });
  optionalNumber(body.temperature, 'temperature', { min: 0, max: 2, nullable: true });
  optionalNumber(body.top_p, 'top_p', { min: 0, max: 1, nullable: true });
  optionalNumber(body.top_logprobs, 'top_logprobs', { min: 0, max: 20, integer: true, nullable: true });
  validateMetadata(body.metadata);
  optionalString(body.user, 'user');
  optionalBoolean(body.store, 'store', true);
  optionalBoolean(body.stream, 'stream', true);
  optionalBoolean(body.background, 'background', true);
  if (body.stream_options !== undefined && body.stream_options !== null) {
    requireObject(body.stream_options, 'stream_options');
    if (body.stream !== true) throw invalid('is only allowed when stream is true.', { param: 'stream_options' });
  }
  if (body.previous_response_id !== null) optionalString(body.previous_response_id, 'previous_response_id');
  if (typeof body.previous_response_id === 'string' && body.previous_response_id.length === 0) throw invalid('must not be empty.', { param: 'previous_response_id' });
  optionalEnum(body.truncation ?? undefined, 'truncation', ['auto', 'disabled']);
  validateInclude(body.include);
  if (isRecord(body.conversation) || typeof body.conversation === 'string') {
    if (body.previous_response_id !== undefined && body.previous_response_id !== null) throw invalid('cannot be used together with previous_response_id.', { param: 'conversation' });
  }
  return body as ResponsesRequest;
}
