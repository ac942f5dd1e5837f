import type { MessagesCountRequest, MessagesRequest } from '../../../spec/messages.js';
import { describe, invalid, optionalBoolean, optionalEnum, optionalNumber, optionalString, requireObject, requireString } from '../../validate.js';

/**
 * Validation of `POST /v1/messages` and `/v1/messages/count_tokens` bodies against the Messages
 * API's documented bounds. Each error is a 400 whose `param` (and message) names the field, e.g.
 * `messages[1].content[0].source.media_type`. Fields the gateway does not read (`output_config`,
 * `context_management`, `container`, …) are kept as sent; only their JSON type is checked where
 * the API documents one.
 */

const ROLES = ['user', 'assistant', 'system'] as const;
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
/** Anthropic's tool names: `^[a-zA-Z0-9_-]{1,128}$`. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
/** The smallest thinking budget Anthropic accepts. */
export const MIN_THINKING_BUDGET = 1024;

function optionalObject(value: unknown, param: string): void {
  if (value !== undefined && value !== null) requireObject(value, param);
}

function requireArray(value: unknown, param: string): unknown[] {
  if (value === undefined) throw invalid('is required.', { param });
  if (!Array.isArray(value)) throw invalid(`expected an array, got ${describe(value)}.`, { param });
  return value;
}

function validateSource(value: unknown, param: string, kind: 'image' | 'document'): void {
  const source = requireObject(value, param);
  const types = kind === 'image' ? ['base64', 'url', 'file'] : ['base64', 'url', 'file', 'text', 'content'];
  if (source.type === undefined) throw invalid('is required.', { param: `${param}.type` });
  optionalEnum(source.type, `${param}.type`, types);
  switch (source.type) {
    case 'base64':
      requireString(source.media_type, `${param}.media_type`);
      optionalEnum(source.media_type, `${param}.media_type`, kind === 'image' ? IMAGE_TYPES : ['application/pdf']);
      requireString(source.data, `${param}.data`, { nonEmpty: true });
      break;
    case 'text':
      optionalEnum(source.media_type, `${param}.media_type`, ['text/plain']);
      requireString(source.data, `${param}.data`);
      break;
    case 'url':
      requireString(source.url, `${param}.url`, { nonEmpty: true });
      break;
    case 'file':
      requireString(source.file_id, `${param}.file_id`, { nonEmpty: true });
      break;
    case 'content':
      if (typeof source.content !== 'string') validateBlocks(source.content, `${param}.content`, 'user');
      break;
  }
}

function validateBlock(value: unknown, param: string, role: 'user' | 'assistant' | 'system'): void {
  const block = requireObject(value, param);
  const type = requireString(block.type, `${param}.type`, { nonEmpty: true });
  optionalObject(block.cache_control, `${param}.cache_control`);
  if (role === 'system' && type !== 'text') throw invalid(`system content holds only text blocks, got "${type}".`, { param: `${param}.type` });
  switch (type) {
    case 'text':
      requireString(block.text, `${param}.text`);
      break;
    case 'image':
      validateSource(block.source, `${param}.source`, 'image');
      break;
    case 'document':
      validateSource(block.source, `${param}.source`, 'document');
      optionalString(block.title ?? undefined, `${param}.title`);
      break;
    case 'tool_use':
      if (role !== 'assistant') throw invalid('tool_use blocks belong in assistant messages.', { param: `${param}.type` });
      requireString(block.id, `${param}.id`, { nonEmpty: true });
      requireString(block.name, `${param}.name`, { nonEmpty: true });
      requireObject(block.input, `${param}.input`);
      break;
    case 'tool_result':
      if (role !== 'user') throw invalid('tool_result blocks belong in user messages.', { param: `${param}.type` });
      requireString(block.tool_use_id, `${param}.tool_use_id`, { nonEmpty: true });
      if (block.content !== undefined && typeof block.content !== 'string') validateBlocks(block.content, `${param}.content`, 'user');
      optionalBoolean(block.is_error, `${param}.is_error`);
      break;
    case 'thinking':
      requireString(block.thinking, `${param}.thinking`);
      requireString(block.signature, `${param}.signature`);
      break;
    case 'redacted_thinking':
      requireString(block.data, `${param}.data`);
      break;
    // Other block types (server tool results, search results, …) are carried as sent.
  }
}

function validateBlocks(value: unknown, param: string, role: 'user' | 'assistant' | 'system'): void {
  requireArray(value, param).forEach((block, index) => validateBlock(block, `${param}[${index}]`, role));
}

function validateMessages(value: unknown): void {
  const messages = requireArray(value, 'messages');
  if (messages.length === 0) throw invalid('must hold at least one message.', { param: 'messages' });
  messages.forEach((entry, index) => {
    const at = `messages[${index}]`;
    const message = requireObject(entry, at);
    if (message.role === undefined) throw invalid('is required.', { param: `${at}.role` });
    optionalEnum(message.role, `${at}.role`, ROLES);
    const role = message.role as (typeof ROLES)[number];
    if (typeof message.content === 'string') return;
    if (message.content === undefined) throw invalid('is required.', { param: `${at}.content` });
    if (!Array.isArray(message.content)) throw invalid(`expected a string or an array of content blocks, got ${describe(message.content)}.`, { param: `${at}.content` });
    validateBlocks(message.content, `${at}.content`, role);
  });
}

function validateSystem(value: unknown): void {
  if (value === undefined || typeof value === 'string') return;
  if (!Array.isArray(value)) throw invalid(`expected a string or an array of text blocks, got ${describe(value)}.`, { param: 'system' });
  validateBlocks(value, 'system', 'system');
}

function validateTools(value: unknown): Set<string> {
  const names = new Set<string>();
  if (value === undefined) return names;
  requireArray(value, 'tools').forEach((entry, index) => {
    const at = `tools[${index}]`;
    const tool = requireObject(entry, at);
    const name = requireString(tool.name, `${at}.name`);
    names.add(name);
    optionalObject(tool.cache_control, `${at}.cache_control`);
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
      // A server or client tool of Anthropic's (web search, bash, text editor, …): versioned by its type.
      requireString(tool.type, `${at}.type`, { nonEmpty: true });
      return;
    }
    if (!TOOL_NAME.test(name)) throw invalid('must be 1 to 128 characters of a-z, A-Z, 0-9, underscore or dash.', { param: `${at}.name` });
    optionalString(tool.description, `${at}.description`);
    if (tool.input_schema === undefined) throw invalid('is required.', { param: `${at}.input_schema` });
    requireObject(tool.input_schema, `${at}.input_schema`);
  });
  return names;
}

function validateToolChoice(value: unknown, tools: Set<string>): void {
  if (value === undefined) return;
  const choice = requireObject(value, 'tool_choice');
  if (choice.type === undefined) throw invalid('is required.', { param: 'tool_choice.type' });
  optionalEnum(choice.type, 'tool_choice.type', ['auto', 'any', 'tool', 'none']);
  optionalBoolean(choice.disable_parallel_tool_use, 'tool_choice.disable_parallel_tool_use');
  if (choice.type === 'any' && tools.size === 0) throw invalid("'any' needs at least one tool in tools.", { param: 'tool_choice' });
  if (choice.type !== 'tool') return;
  const name = requireString(choice.name, 'tool_choice.name');
  if (!tools.has(name)) throw invalid(`names no tool in tools: "${name}".`, { param: 'tool_choice.name' });
}

function validateThinking(value: unknown): void {
  if (value === undefined) return;
  const thinking = requireObject(value, 'thinking');
  if (thinking.type === undefined) throw invalid('is required.', { param: 'thinking.type' });
  optionalEnum(thinking.type, 'thinking.type', ['enabled', 'disabled', 'adaptive']);
  if (thinking.type !== 'enabled') return;
  if (thinking.budget_tokens === undefined) throw invalid("is required when thinking.type is 'enabled'.", { param: 'thinking.budget_tokens' });
  optionalNumber(thinking.budget_tokens, 'thinking.budget_tokens', { integer: true, min: MIN_THINKING_BUDGET });
}

function validateStopSequences(value: unknown): void {
  if (value === undefined) return;
  requireArray(value, 'stop_sequences').forEach((entry, index) => requireString(entry, `stop_sequences[${index}]`, { nonEmpty: true }));
}

/** The fields both endpoints share: model, messages, system, tools, tool choice, thinking. */
function validateCommon(body: Record<string, unknown>): void {
  requireString(body.model, 'model', { nonEmpty: true });
  validateMessages(body.messages);
  validateSystem(body.system);
  validateToolChoice(body.tool_choice, validateTools(body.tools));
  validateThinking(body.thinking);
  optionalObject(body.output_config, 'output_config');
  optionalObject(body.context_management, 'context_management');
}

/** Validates a `POST /v1/messages` body; throws a 400 naming the first bad field. */
export function validateMessagesRequest(body: Record<string, unknown>): MessagesRequest {
  if (body.max_tokens === undefined) throw invalid('is required.', { param: 'max_tokens' });
  optionalNumber(body.max_tokens, 'max_tokens', { integer: true, min: 1 });
  validateCommon(body);
  validateStopSequences(body.stop_sequences);
  optionalNumber(body.temperature, 'temperature', { min: 0, max: 1 });
  optionalNumber(body.top_p, 'top_p', { min: 0, max: 1 });
  optionalNumber(body.top_k, 'top_k', { integer: true, min: 0 });
  optionalBoolean(body.stream, 'stream');
  if (body.metadata !== undefined) {
    const metadata = requireObject(body.metadata, 'metadata');
    if (metadata.user_id !== null) optionalString(metadata.user_id, 'metadata.user_id');
  }
  return body as MessagesRequest;
}

/** Validates a `POST /v1/messages/count_tokens` body (no `max_tokens`, no sampling fields). */
export function validateCountRequest(body: Record<string, unknown>): MessagesCountRequest {
  validateCommon(body);
  return body as MessagesCountRequest;
}
