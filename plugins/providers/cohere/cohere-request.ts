import { type ChatMessage, type ChatRequest, errors } from '../../../core/spec/index.js';
import { contentParts, contentText, functionTools, requireSingleChoice, stopList, toolChoiceOf } from '../../shared/chat-mapping.js';

type CohereContent = string | Array<{ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: string } }>;

interface CohereMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: CohereContent;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

function userContent(message: ChatMessage, param: string): CohereContent {
  if (typeof message.content === 'string') return message.content;
  return contentParts(message.content, param).map((part, index) => {
    if (part.type === 'text') return { type: 'text' as const, text: part.text };
    if (part.type === 'image') return { type: 'image_url' as const, image_url: part.detail ? { url: part.url, detail: part.detail } : { url: part.url } };
    // Cohere declares no file parts, so the core refuses them first; this guards a direct caller of the mapper.
    throw errors.invalidRequest(`Invalid '${param}[${index}]': Cohere takes no file parts.`, { param: `${param}[${index}]`, code: 'unsupported_content_part' });
  });
}

function convertMessage(message: ChatMessage, index: number): CohereMessage {
  const param = `messages[${index}].content`;
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: contentText(message.content, param) };
    case 'user':
      return { role: 'user', content: userContent(message, param) };
    case 'assistant': {
      const out: CohereMessage = { role: 'assistant' };
      const text = contentText(message.content, param);
      if (text !== '') out.content = text;
      if (message.tool_calls?.length) {
        out.tool_calls = message.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments || '{}' } }));
      }
      return out;
    }
    case 'tool':
      if (!message.tool_call_id) throw errors.invalidRequest('A tool message needs tool_call_id.', { param: `messages[${index}].tool_call_id`, code: 'missing_required_parameter' });
      return { role: 'tool', tool_call_id: message.tool_call_id, content: contentText(message.content, param) };
    default:
      throw errors.invalidRequest(`The role "${message.role}" is not supported by Cohere; use tools and tool messages.`, { param: `messages[${index}].role`, code: 'unsupported_parameter' });
  }
}

/** Cohere's penalties range over 0..1 (OpenAI's over -2..2): values outside are refused, not clamped. */
function penalty(value: unknown, param: string): number | undefined {
  if (typeof value !== 'number') return undefined;
  if (value < 0 || value > 1) throw errors.invalidRequest(`Cohere accepts ${param} between 0 and 1.`, { param, code: 'invalid_value' });
  return value;
}

/** The Chat v2 body for a unified chat request. */
export function toCohereBody(request: ChatRequest): Record<string, unknown> {
  requireSingleChoice(request.n, 'cohere');
  const body: Record<string, unknown> = { model: request.model, messages: request.messages.map(convertMessage) };
  if (request.stream) body.stream = true;
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === 'number') body.max_tokens = maxTokens;
  if (typeof request.temperature === 'number') body.temperature = request.temperature;
  if (typeof request.top_p === 'number') body.p = request.top_p;
  if (typeof request.seed === 'number') body.seed = request.seed;
  const frequency = penalty(request.frequency_penalty, 'frequency_penalty');
  if (frequency !== undefined) body.frequency_penalty = frequency;
  const presence = penalty(request.presence_penalty, 'presence_penalty');
  if (presence !== undefined) body.presence_penalty = presence;
  const stops = stopList(request.stop);
  if (stops) body.stop_sequences = stops;

  const format = request.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  if (format?.type === 'json_object') body.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') body.response_format = { type: 'json_object', ...(format.json_schema?.schema ? { json_schema: format.json_schema.schema } : {}) };

  let tools = functionTools(request.tools);
  const choice = toolChoiceOf(request.tool_choice);
  if (tools.length) {
    // Cohere cannot name one tool: offering only that tool and requiring a call means the same.
    if (choice?.kind === 'named') {
      tools = tools.filter((tool) => tool.name === choice.name);
      if (tools.length === 0) throw errors.invalidRequest(`tool_choice names "${choice.name}", which is not among the tools.`, { param: 'tool_choice', code: 'invalid_value' });
    }
    body.tools = tools.map((tool) => ({ type: 'function', function: tool }));
    if (choice?.kind === 'required' || choice?.kind === 'named') body.tool_choice = 'REQUIRED';
    if (choice?.kind === 'none') body.tool_choice = 'NONE';
  }
  if (request.thinking?.type === 'enabled') {
    body.thinking = { type: 'enabled', ...(request.thinking.budget_tokens ? { token_budget: request.thinking.budget_tokens } : {}) };
  }
  return body;
}
