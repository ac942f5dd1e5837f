/**
 * The answer schemas of the unified `/v1` API (chat completions, completions, embeddings, images,
 * models, errors), spread into the gateway's OpenAPI document (core/api/openapi.ts).
 */

export type Schema = Record<string, unknown>;

const string: Schema = { type: 'string' };
const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type, 'null'] });

/** A tool call of an assistant message, as requests send them back and answers carry them. */
export const toolCall: Schema = {
  type: 'object',
  required: ['id', 'function'],
  properties: {
    id: string,
    type: { enum: ['function'] },
    function: { type: 'object', required: ['name', 'arguments'], properties: { name: string, arguments: string } },
  },
};

const usage: Schema = {
  type: 'object',
  properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
};
export const responseSchemas: Record<string, Schema> = {
  ChatCompletion: {
    type: 'object',
    required: ['id', 'object', 'created', 'model', 'choices'],
    properties: {
      id: string,
      object: { const: 'chat.completion' },
      created: { type: 'integer' },
      model: string,
      choices: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            index: { type: 'integer' },
            message: { type: 'object', properties: { role: { const: 'assistant' }, content: nullable(string), refusal: nullable(string), tool_calls: { type: 'array', items: toolCall } } },
            finish_reason: nullable(string),
            logprobs: { type: ['object', 'null'] },
          },
        },
      },
      usage,
      system_fingerprint: nullable(string),
    },
  },
  ChatCompletionChunk: {
    type: 'object',
    description: 'One `data:` event of the stream, which ends with `data: [DONE]`. A broken stream ends with an `{"error": …}` event.',
    properties: { id: string, object: { const: 'chat.completion.chunk' }, created: { type: 'integer' }, model: string, choices: { type: 'array' }, usage: nullable(usage) },
  },
  Completion: {
    type: 'object',
    properties: {
      id: string,
      object: { const: 'text_completion' },
      created: { type: 'integer' },
      model: string,
      choices: { type: 'array', items: { type: 'object', properties: { index: { type: 'integer' }, text: string, finish_reason: nullable(string), logprobs: { type: ['object', 'null'] } } } },
      usage,
    },
  },
  EmbeddingList: {
    type: 'object',
    properties: {
      object: { const: 'list' },
      data: {
        type: 'array',
        items: {
          type: 'object',
          properties: { object: { const: 'embedding' }, index: { type: 'integer' }, embedding: { anyOf: [{ type: 'array', items: { type: 'number' } }, string], description: 'Numbers, or base64 with `encoding_format: base64`.' } },
        },
      },
      model: string,
      usage: { type: 'object', properties: { prompt_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } } },
    },
  },
  RerankResponse: {
    type: 'object',
    required: ['model', 'results'],
    properties: {
      id: string,
      model: string,
      results: {
        type: 'array',
        description: 'Best first (ties by index), at most `top_n`.',
        items: {
          type: 'object',
          required: ['index', 'relevance_score'],
          properties: {
            index: { type: 'integer', description: "The document's position in the request." },
            relevance_score: { type: 'number' },
            document: { type: 'object', properties: { text: string }, description: 'The document as sent (a string as `{ text }`); only with `return_documents: true`.' },
          },
        },
      },
      usage: {
        type: 'object',
        description: 'What the provider billed, when it reports it: tokens, or search units (Cohere).',
        properties: { prompt_tokens: { type: 'integer' }, total_tokens: { type: 'integer' }, search_units: { type: 'number' } },
      },
    },
  },
  ImagesResponse: {
    type: 'object',
    properties: {
      created: { type: 'integer' },
      data: { type: 'array', items: { type: 'object', properties: { url: string, b64_json: string, revised_prompt: string } } },
    },
  },
  ModelList: {
    type: 'object',
    description:
      "With `x-gateway-provider`: the provider's own list. Without it: the gateway's catalogue of what the caller's key may reach (docs/model-catalogue.md), each entry a `CatalogueModel`.",
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: { type: 'object', properties: { id: string, object: { const: 'model' }, created: { type: 'integer' }, owned_by: string } } },
    },
  },
  CatalogueModel: {
    type: 'object',
    required: ['id', 'object', 'created', 'owned_by', 'kind'],
    properties: {
      id: string,
      object: { const: 'model' },
      created: { type: 'integer', description: 'Release date (Unix seconds) where known, else 0.' },
      owned_by: { ...string, description: "The provider; an alias's or a route's first provider (`gateway` when it has none directly)." },
      kind: { enum: ['model', 'alias', 'route'] },
      providers: { type: 'array', items: string, description: "An alias's or a route's providers, in target order." },
      context_window: { type: 'integer' },
      capabilities: {
        type: 'object',
        description: 'What the catalogue knows; a capability it says nothing of is absent.',
        properties: { tools: { type: 'boolean' }, vision: { type: 'boolean' }, audio: { type: 'boolean' }, reasoning: { type: 'boolean' }, structured_output: { type: 'boolean' } },
      },
      pricing: {
        type: 'object',
        description: 'What the gateway charges: USD per million tokens (per thousand searches for rerank models), and where the price comes from.',
        properties: {
          input_per_million: { type: 'number' },
          output_per_million: { type: 'number' },
          cached_input_per_million: { type: 'number' },
          searches_per_thousand: { type: 'number' },
          source: string,
        },
      },
    },
  },
  ResponseCreateRequest: {
    type: 'object',
    required: ['model'],
    description: "The OpenAI Responses API request (docs/protocols.md lists each field per provider: mapped, dropped or 400). `input` is required unless `previous_response_id` is given.",
    properties: {
      model: string,
      input: { oneOf: [string, { type: 'array', items: { type: 'object' } }] },
      instructions: nullable(string),
      tools: { type: 'array', items: { type: 'object', required: ['type'], properties: { type: string } } },
      tool_choice: {},
      parallel_tool_calls: nullable({ type: 'boolean' }),
      text: { type: 'object', properties: { format: { type: 'object', properties: { type: { enum: ['text', 'json_object', 'json_schema'] } } } } },
      reasoning: nullable({ type: 'object', properties: { effort: nullable({ enum: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] }) } }),
      max_output_tokens: nullable({ type: 'integer', minimum: 1 }),
      temperature: nullable({ type: 'number', minimum: 0, maximum: 2 }),
      top_p: nullable({ type: 'number', minimum: 0, maximum: 1 }),
      metadata: nullable({ type: 'object', additionalProperties: string, maxProperties: 16 }),
      user: string,
      store: nullable({ type: 'boolean' }),
      previous_response_id: nullable(string),
      include: nullable({ type: 'array', items: string }),
      stream: nullable({ type: 'boolean' }),
    },
  },
  Response: {
    type: 'object',
    properties: {
      id: string,
      object: { const: 'response' },
      created_at: { type: 'integer' },
      status: { enum: ['completed', 'incomplete', 'failed', 'in_progress'] },
      incomplete_details: nullable({ type: 'object', properties: { reason: string } }),
      error: nullable({ type: 'object', properties: { code: string, message: string } }),
      model: string,
      output: { type: 'array', items: { type: 'object', required: ['type'], properties: { type: string, id: string } } },
      usage: nullable({
        type: 'object',
        properties: {
          input_tokens: { type: 'integer' },
          input_tokens_details: { type: 'object', properties: { cached_tokens: { type: 'integer' } } },
          output_tokens: { type: 'integer' },
          output_tokens_details: { type: 'object', properties: { reasoning_tokens: { type: 'integer' } } },
          total_tokens: { type: 'integer' },
        },
      }),
    },
  },
  Transcription: { type: 'object', properties: { text: string }, description: 'With `response_format` json or verbose_json; other formats are text.' },
  ErrorBody: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'param', 'code'],
        properties: {
          message: string,
          type: { ...string, description: 'invalid_request_error, authentication_error, permission_error, not_found_error, rate_limit_error, upstream_error, overloaded_error, timeout_error, api_error, …' },
          param: nullable(string),
          code: nullable(string),
          provider: { ...string, description: "Set when the error is an upstream's own, mapped to this shape." },
        },
      },
    },
  },
};
