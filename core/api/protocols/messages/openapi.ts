import { MIN_THINKING_BUDGET } from './schema.js';

/**
 * The OpenAPI (JSON Schema 2020-12) description of the Messages API routes: the bounds
 * `schema.ts` enforces, for `core/api/openapi.ts`. Rules that depend on the role (tool_use only
 * from the assistant, tool_result only from the user, system text only) are stated in words.
 */

type Schema = Record<string, unknown>;

const string: Schema = { type: 'string' };
const nonEmpty: Schema = { type: 'string', minLength: 1 };
const object: Schema = { type: 'object' };
const when = (type: string, then: Schema): Schema => ({ if: { required: ['type'], properties: { type: { const: type } } }, then });

const source = (types: string[], base64MediaTypes: string[]): Schema => ({
  type: 'object',
  required: ['type'],
  properties: { type: { enum: types } },
  allOf: [
    when('base64', { required: ['media_type', 'data'], properties: { media_type: { enum: base64MediaTypes }, data: nonEmpty } }),
    when('url', { required: ['url'], properties: { url: nonEmpty } }),
    when('file', { required: ['file_id'], properties: { file_id: nonEmpty } }),
    when('text', { required: ['data'], properties: { media_type: { const: 'text/plain' }, data: string } }),
  ],
});

const block: Schema = {
  type: 'object',
  description:
    'A content block. `tool_use`, `thinking` and `redacted_thinking` come from the assistant, `tool_result` from the user, and `system` holds only text blocks. Other block types are carried as sent.',
  required: ['type'],
  properties: { type: nonEmpty, cache_control: object },
  allOf: [
    when('text', { required: ['text'], properties: { text: string } }),
    when('image', { required: ['source'], properties: { source: source(['base64', 'url', 'file'], ['image/jpeg', 'image/png', 'image/gif', 'image/webp']) } }),
    when('document', { required: ['source'], properties: { source: source(['base64', 'url', 'file', 'text', 'content'], ['application/pdf']), title: { type: ['string', 'null'] } } }),
    when('tool_use', { required: ['id', 'name', 'input'], properties: { id: nonEmpty, name: nonEmpty, input: object } }),
    when('tool_result', { required: ['tool_use_id'], properties: { tool_use_id: nonEmpty, content: { anyOf: [string, { type: 'array', items: { $ref: '#/components/schemas/MessagesContentBlock' } }] }, is_error: { type: 'boolean' } } }),
    when('thinking', { required: ['thinking', 'signature'], properties: { thinking: string, signature: string } }),
    when('redacted_thinking', { required: ['data'], properties: { data: string } }),
  ],
};

const message: Schema = {
  type: 'object',
  required: ['role', 'content'],
  properties: {
    role: { enum: ['user', 'assistant', 'system'], description: 'A `system` entry is read as system text, where it stands.' },
    content: { anyOf: [string, { type: 'array', items: { $ref: '#/components/schemas/MessagesContentBlock' } }] },
  },
};

const tool: Schema = {
  type: 'object',
  required: ['name'],
  description: 'A client tool (no `type`, or `custom`) needs `input_schema` and a name of 1 to 128 of a-z, A-Z, 0-9, _ and -; a tool with another `type` is one of Anthropic\'s (web search, bash, …).',
  properties: { name: string, description: string, cache_control: object },
  if: { anyOf: [{ not: { required: ['type'] } }, { required: ['type'], properties: { type: { enum: ['custom', null] } } }] },
  then: { required: ['input_schema'], properties: { name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,128}$' }, input_schema: object } },
  else: { properties: { type: nonEmpty } },
};

const common: Schema = {
  model: nonEmpty,
  messages: { type: 'array', minItems: 1, items: message },
  system: { anyOf: [string, { type: 'array', items: { $ref: '#/components/schemas/MessagesContentBlock' } }] },
  tools: { type: 'array', items: tool },
  tool_choice: {
    type: 'object',
    required: ['type'],
    description: '`any` needs at least one tool; `tool` names one of `tools`.',
    properties: { type: { enum: ['auto', 'any', 'tool', 'none'] }, disable_parallel_tool_use: { type: 'boolean' }, name: string },
    allOf: [when('tool', { required: ['name'] })],
  },
  thinking: {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: ['enabled', 'disabled', 'adaptive'] } },
    allOf: [when('enabled', { required: ['budget_tokens'], properties: { budget_tokens: { type: 'integer', minimum: MIN_THINKING_BUDGET } } })],
  },
  output_config: object,
  context_management: object,
};

/** `POST /v1/messages`. */
export const messagesRequestSchema: Schema = {
  type: 'object',
  description: 'An Anthropic Messages API request. Fields the gateway does not read are kept (and sent to providers that take the API natively).',
  required: ['model', 'max_tokens', 'messages'],
  properties: {
    ...common,
    max_tokens: { type: 'integer', minimum: 1 },
    stop_sequences: { type: 'array', items: nonEmpty },
    temperature: { type: 'number', minimum: 0, maximum: 1 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    top_k: { type: 'integer', minimum: 0 },
    stream: { type: 'boolean' },
    metadata: { type: 'object', properties: { user_id: { type: ['string', 'null'] } } },
  },
};

/** `POST /v1/messages/count_tokens`. */
export const messagesCountRequestSchema: Schema = { type: 'object', required: ['model', 'messages'], properties: common };

/** The schemas the Messages routes add to the document's components. */
export const messagesSchemas: Record<string, Schema> = {
  MessagesRequest: messagesRequestSchema,
  MessagesCountTokensRequest: messagesCountRequestSchema,
  MessagesContentBlock: block,
  Message: {
    type: 'object',
    required: ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'usage'],
    properties: {
      id: string,
      type: { const: 'message' },
      role: { const: 'assistant' },
      model: string,
      content: { type: 'array', items: { $ref: '#/components/schemas/MessagesContentBlock' } },
      stop_reason: { type: ['string', 'null'], description: '`end_turn`, `max_tokens`, `stop_sequence`, `tool_use`, `pause_turn`, `refusal` (an output guardrail denial), …' },
      stop_sequence: { type: ['string', 'null'] },
      usage: {
        type: 'object',
        required: ['input_tokens', 'output_tokens'],
        properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' }, cache_creation_input_tokens: { type: ['integer', 'null'] }, cache_read_input_tokens: { type: ['integer', 'null'] } },
      },
    },
  },
  MessagesTokenCount: { type: 'object', required: ['input_tokens'], properties: { input_tokens: { type: 'integer' } } },
  MessagesError: {
    type: 'object',
    description: "Errors on the Messages routes have the Messages API's shape, the gateway's own included.",
    required: ['type', 'error'],
    properties: {
      type: { const: 'error' },
      error: {
        type: 'object',
        required: ['type', 'message'],
        properties: {
          type: { enum: ['invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error', 'request_too_large', 'rate_limit_error', 'timeout_error', 'api_error', 'overloaded_error'] },
          message: string,
        },
      },
    },
  },
};
