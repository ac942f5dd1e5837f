import { errors } from '../errors.js';
import type { ChatRequest } from '../spec/unified.js';
import { validateContentParts } from './chat-content-schema.js';
import {
  describe,
  invalid,
  optionalBoolean,
  optionalEnum,
  optionalLogitBias,
  optionalNumber,
  optionalSeed,
  optionalStop,
  optionalStreamOptions,
  optionalString,
  requireName,
  requireObject,
  requireString,
} from './validate.js';

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

function validateContent(value: unknown, param: string, parts: readonly string[], nullable: boolean): void {
  if (typeof value === 'string' || (nullable && (value === null || value === undefined))) return;
  if (Array.isArray(value) && parts.length > 0) {
    if (value.length === 0) throw invalid('must hold at least one content part.', { param });
    validateContentParts(value, param, parts);
    return;
  }
  if (value === undefined) throw invalid('is required.', { param });
  throw invalid(`expected a string${parts.length ? ' or an array of content parts' : ''}, got ${describe(value)}.`, { param });
}

function validateMessage(value: unknown, index: number): void {
  const at = `messages[${index}]`;
  const message = requireObject(value, at);
  if (message.role === undefined) throw invalid('is required.', { param: `${at}.role` });
  optionalEnum(message.role, `${at}.role`, ROLES);
  optionalString(message.name, `${at}.name`);
  switch (message.role) {
    case 'system':
    case 'developer':
      validateContent(message.content, `${at}.content`, ['text'], false);
      break;
    case 'user':
      validateContent(message.content, `${at}.content`, ['text', 'image_url', 'input_audio', 'file'], false);
      break;
    case 'assistant': {
      const calls = message.tool_calls;
      validateContent(message.content, `${at}.content`, ['text', 'refusal'], true);
      if ((message.content === undefined || message.content === null) && calls === undefined && message.function_call === undefined) {
        throw invalid('is required unless tool_calls or function_call is given.', { param: `${at}.content` });
      }
      if (calls !== undefined) {
        if (!Array.isArray(calls)) throw invalid(`expected an array, got ${describe(calls)}.`, { param: `${at}.tool_calls` });
        calls.forEach((call, callIndex) => {
          const callAt = `${at}.tool_calls[${callIndex}]`;
          const entry = requireObject(call, callAt);
          requireString(entry.id, `${callAt}.id`);
          optionalEnum(entry.type, `${callAt}.type`, ['function']);
          const fn = requireObject(entry.function, `${callAt}.function`);
          requireString(fn.name, `${callAt}.function.name`);
          requireString(fn.arguments, `${callAt}.function.arguments`);
        });
      }
      break;
    }
    case 'tool':
      requireString(message.tool_call_id, `${at}.tool_call_id`);
      validateContent(message.content, `${at}.content`, ['text'], false);
      break;
    case 'function':
      requireString(message.name, `${at}.name`);
      validateContent(message.content, `${at}.content`, [], true);
      break;
  }
}

function validateTools(tools: unknown): Set<string> {
  const names = new Set<string>();
  if (tools === undefined) return names;
  if (!Array.isArray(tools)) throw invalid(`expected an array, got ${describe(tools)}.`, { param: 'tools' });
  if (tools.length > 128) throw invalid(`must hold at most 128 tools, got ${tools.length}.`, { param: 'tools' });
  tools.forEach((tool, index) => {
    const at = `tools[${index}]`;
    const entry = requireObject(tool, at);
    if (entry.type !== 'function') throw invalid(`must be 'function', got ${describe(entry.type)}.`, { param: `${at}.type` });
    const fn = requireObject(entry.function, `${at}.function`);
    names.add(requireName(fn.name, `${at}.function.name`));
    optionalString(fn.description, `${at}.function.description`);
    if (fn.parameters !== undefined) requireObject(fn.parameters, `${at}.function.parameters`);
    optionalBoolean(fn.strict, `${at}.function.strict`, true);
  });
  return names;
}

function validateFunctions(functions: unknown): Set<string> {
  const names = new Set<string>();
  if (functions === undefined) return names;
  if (!Array.isArray(functions)) throw invalid(`expected an array, got ${describe(functions)}.`, { param: 'functions' });
  if (functions.length < 1 || functions.length > 128) {
    throw invalid(`must hold 1 to 128 functions, got ${functions.length}.`, { param: 'functions' });
  }
  functions.forEach((fn, index) => {
    const entry = requireObject(fn, `functions[${index}]`);
    names.add(requireName(entry.name, `functions[${index}].name`));
    optionalString(entry.description, `functions[${index}].description`);
    if (entry.parameters !== undefined) requireObject(entry.parameters, `functions[${index}].parameters`);
  });
  return names;
}

function validateResponseFormat(value: unknown): void {
  if (value === undefined || value === null) return;
  const format = requireObject(value, 'response_format');
  if (format.type === undefined) throw invalid('is required.', { param: 'response_format.type' });
  optionalEnum(format.type, 'response_format.type', ['text', 'json_object', 'json_schema']);
  if (format.type !== 'json_schema') return;
  const schema = requireObject(format.json_schema, 'response_format.json_schema');
  requireName(schema.name, 'response_format.json_schema.name');
  optionalString(schema.description, 'response_format.json_schema.description');
  if (schema.schema !== undefined) requireObject(schema.schema, 'response_format.json_schema.schema');
  optionalBoolean(schema.strict, 'response_format.json_schema.strict', true);
}

function validateToolChoice(value: unknown, tools: Set<string>): void {
  if (value === undefined || typeof value === 'string') {
    optionalEnum(value, 'tool_choice', ['none', 'auto', 'required']);
    if (value === 'required' && tools.size === 0) throw invalid("'required' needs at least one tool in tools.", { param: 'tool_choice' });
    return;
  }
  const choice = requireObject(value, 'tool_choice');
  if (choice.type !== 'function') throw invalid(`must be 'function', got ${describe(choice.type)}.`, { param: 'tool_choice.type' });
  const fn = requireObject(choice.function, 'tool_choice.function');
  const name = requireString(fn.name, 'tool_choice.function.name');
  if (!tools.has(name)) throw invalid(`names no tool in tools: "${name}".`, { param: 'tool_choice.function.name' });
}

function validateFunctionCall(value: unknown, functions: Set<string>): void {
  if (value === undefined || typeof value === 'string') {
    optionalEnum(value, 'function_call', ['none', 'auto']);
    return;
  }
  const call = requireObject(value, 'function_call');
  const name = requireString(call.name, 'function_call.name');
  if (!functions.has(name)) throw invalid(`names no function in functions: "${name}".`, { param: 'function_call.name' });
}

function validateThinking(value: unknown, strict: boolean): void {
  if (value === undefined || value === null) return;
  const thinking = requireObject(value, 'thinking');
  if (thinking.type === undefined) throw invalid('is required.', { param: 'thinking.type' });
  optionalEnum(thinking.type, 'thinking.type', ['enabled', 'disabled']);
  optionalNumber(thinking.budget_tokens, 'thinking.budget_tokens', { integer: true, min: 1 });
  if (strict) {
    throw errors.invalidRequest(
      "'thinking' is not part of the OpenAI chat schema. To use it, send the header 'x-gateway-strict-api-compliance: false' with a provider and model that support reasoning.",
      { param: 'thinking', code: 'strict_api_compliance' },
    );
  }
}

/**
 * Validates a chat request against every bound of the API spec. Unknown top-level fields are kept
 * (OpenAI-compatible providers receive them untouched). Throws a 400 naming the first bad field.
 */
export function validateChatRequest(body: Record<string, unknown>, strict: boolean): ChatRequest {
  requireString(body.model, 'model', { nonEmpty: true });
  const messages = body.messages;
  if (messages === undefined) throw invalid('is required.', { param: 'messages' });
  if (!Array.isArray(messages)) throw invalid(`expected an array, got ${describe(messages)}.`, { param: 'messages' });
  if (messages.length === 0) throw invalid('must hold at least one message.', { param: 'messages' });
  messages.forEach(validateMessage);

  optionalNumber(body.frequency_penalty, 'frequency_penalty', { min: -2, max: 2, nullable: true });
  optionalNumber(body.presence_penalty, 'presence_penalty', { min: -2, max: 2, nullable: true });
  optionalLogitBias(body.logit_bias, 'logit_bias');
  optionalBoolean(body.logprobs, 'logprobs', true);
  optionalNumber(body.top_logprobs, 'top_logprobs', { min: 0, max: 20, integer: true, nullable: true });
  if (body.top_logprobs !== undefined && body.top_logprobs !== null && body.logprobs !== true) {
    throw invalid('requires logprobs to be true.', { param: 'top_logprobs' });
  }
  optionalNumber(body.max_tokens, 'max_tokens', { min: 1, integer: true, nullable: true });
  optionalNumber(body.max_completion_tokens, 'max_completion_tokens', { min: 1, integer: true, nullable: true });
  optionalNumber(body.n, 'n', { min: 1, max: 128, integer: true, nullable: true });
  validateResponseFormat(body.response_format);
  optionalSeed(body.seed, 'seed');
  optionalStop(body.stop, 'stop');
  optionalBoolean(body.stream, 'stream', true);
  optionalStreamOptions(body.stream_options, body.stream);
  validateThinking(body.thinking, strict);
  optionalNumber(body.temperature, 'temperature', { min: 0, max: 2, nullable: true });
  optionalNumber(body.top_p, 'top_p', { min: 0, max: 1, nullable: true });
  const tools = validateTools(body.tools);
  validateToolChoice(body.tool_choice, tools);
  optionalBoolean(body.parallel_tool_calls, 'parallel_tool_calls');
  optionalString(body.user, 'user');
  const functions = validateFunctions(body.functions);
  validateFunctionCall(body.function_call, functions);
  return body as ChatRequest;
}
