import { adminOpenApi } from '../admin/openapi.js';
import { IMAGE_MODEL_A, IMAGE_MODEL_B } from './images-generate-schema.js';
import { SPEECH_FORMATS, SPEECH_MODELS, SPEECH_VOICES } from './speech-schema.js';
import { INPUT_AUDIO_FORMATS } from './chat-content-schema.js';
import { BASE64_PATTERN, DATA_URL_PATTERN, NAME_PATTERN } from './validate.js';
import { messagesSchemas } from './protocols/messages/openapi.js';

/**
 * The OpenAPI 3.1 description of the unified `/v1` API, merged with the admin API's
 * (core/admin/openapi.ts) into the one document served at `GET /openapi.json`. The request schemas
 * state the bounds the validators enforce (core/api/*-schema.ts, multipart-operations.ts); a test
 * runs a table of valid and invalid bodies through both and asserts they agree.
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type, 'null'] });
const json = (schema: Schema) => ({ content: { 'application/json': { schema } } });
const string: Schema = { type: 'string' };
const nonEmpty: Schema = { type: 'string', minLength: 1 };
const boolean: Schema = { type: 'boolean' };
const name: Schema = { type: 'string', pattern: NAME_PATTERN.source };
const anyObject: Schema = { type: 'object' };
const range = (type: 'number' | 'integer', minimum?: number, maximum?: number): Schema => ({
  type,
  ...(minimum === undefined ? {} : { minimum }),
  ...(maximum === undefined ? {} : { maximum }),
});
/** True when the object has `field` and it matches `schema` (an `if` that an absent field does not satisfy). */
const has = (field: string, schema: Schema = {}): Schema => ({ required: [field], properties: { [field]: schema } });

// JSON numbers are doubles: the signed 64-bit bounds are ±2^63 (as core/api/validate.ts).
const seed = nullable(range('integer', -(2 ** 63), 2 ** 63));
const penalty = nullable(range('number', -2, 2));
const logitBias: Schema = {
  type: ['object', 'null'],
  description: 'Token id → bias from -100 to 100.',
  propertyNames: { pattern: '^\\d+$' },
  additionalProperties: range('integer', -100, 100),
};
const stop: Schema = {
  description: 'Up to 4 sequences where the model stops.',
  anyOf: [{ type: ['string', 'null'] }, { type: 'array', minItems: 1, maxItems: 4, items: string }],
};
const streamOptions: Schema = { type: ['object', 'null'], properties: { include_usage: boolean }, description: 'Only with `stream: true`.' };
/** `stream_options` is refused unless `stream` is true. */
const streamOptionsNeedStream: Schema = { if: has('stream_options', { type: 'object' }), then: has('stream', { const: true }) };

const tokenIds: Schema = { type: 'array', minItems: 1, items: range('integer', 0) };
/** `prompt` and embedding `input`: a string, or a non-empty array of strings, token ids or token-id arrays (never mixed). */
const textOrTokens = (maxInputs?: number, stringSchema: Schema = string): Schema => {
  const batch = maxInputs === undefined ? {} : { maxItems: maxInputs };
  return {
    anyOf: [
      stringSchema,
      { type: 'array', minItems: 1, ...batch, items: stringSchema },
      tokenIds,
      { type: 'array', minItems: 1, ...batch, items: tokenIds },
    ],
  };
};

/** A `file` part's `file`: one of `file_data` (a base64 data URL) and `file_id`. */
const filePart: Schema = {
  type: 'object',
  properties: {
    file_data: { type: 'string', pattern: DATA_URL_PATTERN.source, description: 'A base64 data URL: `data:application/pdf;base64,...`.' },
    file_id: nonEmpty,
    filename: string,
  },
  anyOf: [{ required: ['file_data'] }, { required: ['file_id'] }],
};

/** An `input_audio` part's `input_audio`: base64 audio (no data URL prefix) and its format. */
const inputAudioPart: Schema = {
  type: 'object',
  required: ['data', 'format'],
  properties: { data: { type: 'string', pattern: BASE64_PATTERN.source }, format: { enum: [...INPUT_AUDIO_FORMATS] } },
};

function contentPart(types: readonly string[]): Schema {
  const when = (type: string, then: Schema): Schema => ({ if: has('type', { const: type }), then });
  return {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: types } },
    allOf: [
      when('text', has('text', string)),
      when('refusal', has('refusal', string)),
      when('image_url', has('image_url', { type: 'object', required: ['url'], properties: { url: nonEmpty, detail: { enum: ['auto', 'low', 'high'] } } })),
      when('file', has('file', filePart)),
      when('input_audio', has('input_audio', inputAudioPart)),
    ],
  };
}

const content = (types: readonly string[], allowNull = false): Schema => ({
  anyOf: [
    { type: allowNull ? ['string', 'null'] : 'string' },
    ...(types.length ? [{ type: 'array', minItems: 1, items: contentPart(types) }] : []),
  ],
});

const toolCall: Schema = {
  type: 'object',
  required: ['id', 'function'],
  properties: {
    id: string,
    type: { enum: ['function'] },
    function: { type: 'object', required: ['name', 'arguments'], properties: { name: string, arguments: string } },
  },
};

const message: Schema = {
  type: 'object',
  required: ['role'],
  properties: { role: { enum: ['system', 'developer', 'user', 'assistant', 'tool', 'function'] }, name: string },
  allOf: [
    { if: has('role', { enum: ['system', 'developer'] }), then: { required: ['content'], properties: { content: content(['text']) } } },
    { if: has('role', { const: 'user' }), then: { required: ['content'], properties: { content: content(['text', 'image_url', 'input_audio', 'file']) } } },
    {
      if: has('role', { const: 'assistant' }),
      then: {
        properties: { content: content(['text', 'refusal'], true), tool_calls: { type: 'array', items: toolCall } },
        description: '`content` is required unless `tool_calls` or `function_call` is given.',
        anyOf: [has('content', { type: ['string', 'array'] }), { required: ['tool_calls'] }, { required: ['function_call'] }],
      },
    },
    { if: has('role', { const: 'tool' }), then: { required: ['tool_call_id', 'content'], properties: { tool_call_id: string, content: content(['text']) } } },
    { if: has('role', { const: 'function' }), then: { required: ['name'], properties: { content: content([], true) } } },
  ],
};

const functionDefinition: Schema = {
  type: 'object',
  required: ['name'],
  properties: { name, description: string, parameters: anyObject },
};

const chatRequest: Schema = {
  type: 'object',
  required: ['model', 'messages'],
  description:
    'Unknown fields are kept and sent to OpenAI-compatible providers. `tool_choice.function.name` must name a tool in `tools`, and `function_call.name` a function in `functions`.',
  properties: {
    model: nonEmpty,
    messages: { type: 'array', minItems: 1, items: message },
    frequency_penalty: penalty,
    presence_penalty: penalty,
    logit_bias: logitBias,
    logprobs: nullable(boolean),
    top_logprobs: nullable(range('integer', 0, 20)),
    max_tokens: nullable(range('integer', 1)),
    max_completion_tokens: nullable(range('integer', 1)),
    n: nullable(range('integer', 1, 128)),
    response_format: {
      type: ['object', 'null'],
      required: ['type'],
      properties: { type: { enum: ['text', 'json_object', 'json_schema'] } },
      if: has('type', { const: 'json_schema' }),
      then: has('json_schema', {
        type: 'object',
        required: ['name'],
        properties: { name, description: string, schema: anyObject, strict: nullable(boolean) },
      }),
    },
    seed,
    stop,
    stream: nullable(boolean),
    stream_options: streamOptions,
    thinking: {
      type: ['object', 'null'],
      description: 'Not part of the OpenAI schema: refused (400 `strict_api_compliance`) unless `x-gateway-strict-api-compliance: false`.',
      required: ['type'],
      properties: { type: { enum: ['enabled', 'disabled'] }, budget_tokens: range('integer', 1) },
    },
    temperature: nullable(range('number', 0, 2)),
    top_p: nullable(range('number', 0, 1)),
    tools: {
      type: 'array',
      maxItems: 128,
      items: {
        type: 'object',
        required: ['type', 'function'],
        properties: { type: { const: 'function' }, function: { ...functionDefinition, properties: { ...(functionDefinition.properties as Schema), strict: nullable(boolean) } } },
      },
    },
    tool_choice: {
      anyOf: [
        { enum: ['none', 'auto', 'required'] },
        { type: 'object', required: ['type', 'function'], properties: { type: { const: 'function' }, function: { type: 'object', required: ['name'], properties: { name: string } } } },
      ],
    },
    parallel_tool_calls: boolean,
    user: string,
    functions: { type: 'array', minItems: 1, maxItems: 128, items: functionDefinition, deprecated: true },
    function_call: { anyOf: [{ enum: ['none', 'auto'] }, { type: 'object', required: ['name'], properties: { name: string } }], deprecated: true },
  },
  allOf: [
    { if: has('top_logprobs', { type: 'integer' }), then: has('logprobs', { const: true }) },
    { if: has('tool_choice', { const: 'required' }), then: has('tools', { minItems: 1 }) },
    streamOptionsNeedStream,
  ],
};

const completionRequest: Schema = {
  type: 'object',
  required: ['model'],
  description: 'Unknown fields are kept. `best_of` must be greater than `n`.',
  properties: {
    model: nonEmpty,
    prompt: { anyOf: [{ type: 'null' }, textOrTokens()] },
    n: nullable(range('integer', 1, 128)),
    best_of: nullable(range('integer', 0, 20)),
    echo: nullable(boolean),
    frequency_penalty: penalty,
    presence_penalty: penalty,
    logit_bias: logitBias,
    logprobs: nullable(range('integer', 0, 5)),
    max_tokens: nullable(range('integer', 0)),
    seed,
    stop,
    stream: nullable(boolean),
    stream_options: streamOptions,
    suffix: nullable(string),
    temperature: nullable(range('number', 0, 2)),
    top_p: nullable(range('number', 0, 1)),
    user: string,
  },
  allOf: [{ if: has('best_of', { type: 'integer' }), then: { not: has('stream', { const: true }) } }, streamOptionsNeedStream],
};

const embeddingRequest: Schema = {
  type: 'object',
  required: ['model', 'input'],
  description:
    'Unknown fields are kept. A flat array of token ids is one input; arrays of strings or of token-id arrays hold 1 to 2048 inputs. For text-embedding-ada-002 and text-embedding-3-small/-large each input is at most 8192 tokens.',
  properties: {
    model: nonEmpty,
    input: textOrTokens(2048, nonEmpty),
    encoding_format: { enum: ['float', 'base64'] },
    dimensions: range('integer', 1),
    user: string,
  },
};

const IMAGE_SIZES_A = ['256x256', '512x512', '1024x1024'];
const IMAGE_SIZES_B = ['1024x1024', '1792x1024', '1024x1792'];
const nullOr = (values: readonly unknown[]): Schema => ({ enum: [null, ...values] });

const imageGenerateRequest: Schema = {
  type: 'object',
  required: ['prompt'],
  description: `Without \`model\`, ${IMAGE_MODEL_A}. Other image models get these generic checks and then their provider's own.`,
  properties: {
    model: nullable(nonEmpty),
    prompt: nonEmpty,
    n: nullable(range('integer', 1, 10)),
    response_format: nullOr(['url', 'b64_json']),
    user: string,
    quality: nullable(string),
    size: nullable(string),
    style: nullable(string),
  },
  allOf: [
    {
      if: { properties: { model: nullOr([IMAGE_MODEL_A]) } },
      then: {
        properties: { prompt: { maxLength: 1000 }, quality: nullOr(['standard']), style: { type: 'null' }, size: nullOr(IMAGE_SIZES_A) },
      },
    },
    {
      if: has('model', { const: IMAGE_MODEL_B }),
      then: {
        properties: { prompt: { maxLength: 4000 }, n: nullOr([1]), quality: nullOr(['standard', 'hd']), style: nullOr(['vivid', 'natural']), size: nullOr(IMAGE_SIZES_B) },
      },
    },
  ],
};

const speechRequest: Schema = {
  type: 'object',
  required: ['model', 'input', 'voice'],
  properties: {
    model: { ...nonEmpty, description: `${SPEECH_MODELS.join(', ')}, or a model the provider declares.`, examples: SPEECH_MODELS },
    input: { type: 'string', minLength: 1, maxLength: 4096, description: 'At most 4096 characters.' },
    voice: { ...nonEmpty, description: `${SPEECH_VOICES.join(', ')}, or a voice the provider declares.`, examples: SPEECH_VOICES },
    response_format: { enum: SPEECH_FORMATS },
    speed: range('number', 0.25, 4),
  },
};

// Multipart forms: every field arrives as text; the gateway checks files by their bytes.
const png = { type: 'string', contentMediaType: 'image/png', description: 'A square PNG under 4 MB.' };
const imageFormFields: Schema = {
  model: { enum: [IMAGE_MODEL_A], description: `Only ${IMAGE_MODEL_A}.` },
  n: range('integer', 1, 10),
  size: { enum: IMAGE_SIZES_A },
  response_format: { enum: ['url', 'b64_json'] },
  user: string,
};
const imageEditRequest: Schema = {
  type: 'object',
  required: ['image', 'prompt'],
  properties: {
    image: { ...png, description: 'A square PNG under 4 MB, with an alpha channel unless `mask` is sent.' },
    mask: { ...png, description: 'A PNG under 4 MB with the dimensions of `image`.' },
    prompt: { type: 'string', minLength: 1, maxLength: 1000 },
    ...imageFormFields,
  },
};
const imageVariationRequest: Schema = { type: 'object', required: ['image'], properties: { image: png, ...imageFormFields } };
const audioRequest: Schema = {
  type: 'object',
  required: ['file', 'model'],
  properties: {
    file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The audio file.' },
    model: nonEmpty,
    prompt: string,
    response_format: { enum: ['json', 'text', 'srt', 'verbose_json', 'vtt'] },
    temperature: range('number', 0, 1),
    language: string,
  },
};

const usage: Schema = {
  type: 'object',
  properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
};
const responseSchemas: Record<string, Schema> = {
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
  ImagesResponse: {
    type: 'object',
    properties: {
      created: { type: 'integer' },
      data: { type: 'array', items: { type: 'object', properties: { url: string, b64_json: string, revised_prompt: string } } },
    },
  },
  ModelList: {
    type: 'object',
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: { type: 'object', properties: { id: string, object: { const: 'model' }, created: { type: 'integer' }, owned_by: string } } },
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

/** The request headers every `/v1` operation reads (docs/api.md "Request headers"). */
const REQUEST_HEADERS: Record<string, Schema> = {
  'x-gateway-provider': { description: 'Provider slug (`GET /admin/plugins` lists them); not needed with a virtual key or a route.', schema: string },
  Authorization: {
    description:
      '`Bearer <token>`: the provider credential, converted by the provider plugin to its own format. Without x-gateway-api-key, a gateway key here identifies the caller instead and is not forwarded; with it, a gateway key here (the account key or a `vk-…` value) is refused with 400 `gateway_key_not_forwardable`.',
    schema: string,
  },
  'x-gateway-custom-host': { description: 'Base URL to call instead of the provider\'s (`http(s)://host[:port][/path]`), checked by the custom host policy.', schema: { type: 'string', format: 'uri' } },
  'x-gateway-forward-headers': {
    description:
      'Comma-separated request header names passed to the provider untouched (not `x-gateway-*`, hop-by-hop, `host` or `cookie`). A named header whose value holds a gateway key is refused with 400 `gateway_key_not_forwardable` (`param`: the header).',
    schema: string,
  },
  'x-gateway-trace-id': { description: 'Your trace id; generated when absent; echoed in the response.', schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' } },
  'x-gateway-metadata': { description: 'A JSON object of at most 64 string values (keys ≤ 128, values ≤ 512 characters), carried into the log entry.', schema: string },
  'x-gateway-strict-api-compliance': { description: '`true` (default): responses carry only fields of the OpenAI schema. `false`: provider extras pass, and `thinking` is accepted.', schema: { enum: ['true', 'false'] } },
  'x-gateway-request-timeout': { description: 'Upstream deadline of this request in ms, from sending until the answer is complete.', schema: { type: 'string', pattern: '^\\d+$', description: '1 to 3600000' } },
  'x-gateway-config': {
    description:
      'A route, instead of a provider header: a route\'s name or id, or (account key only) the route as JSON (strategy, targets, retry, timeouts; docs/routing.md). A virtual key may name only its own route and the routes granted to it (`allowed_routes`): any other is 403 `route_not_allowed`.',
    schema: string,
  },
  'x-gateway-cache': {
    description: 'The response cache for this request (docs/cache.md): `no-store` (neither read nor stored), `refresh` (asked anew and stored), `only-if-cached` (a hit, or 504 `cache_miss`). Where the cache applies, `Cache-Control: no-store`, `no-cache` and `only-if-cached` are read the same way.',
    schema: { enum: ['no-store', 'refresh', 'only-if-cached'] },
  },
  'x-gateway-cloud-a-resource-name': { description: 'Azure OpenAI: resource name.', schema: string },
  'x-gateway-cloud-a-deployment-id': { description: 'Azure OpenAI: deployment id.', schema: string },
  'x-gateway-cloud-a-api-version': { description: 'Azure OpenAI: API version.', schema: string },
  'x-gateway-cloud-b-project-id': { description: 'Vertex AI: project id.', schema: string },
  'x-gateway-cloud-b-region': { description: 'Vertex AI: region.', schema: string },
  'x-gateway-cloud-c-secret-access-key': { description: 'Bedrock: secret access key (the access key id goes in Authorization).', schema: string },
  'x-gateway-cloud-c-region': { description: 'Bedrock: region.', schema: string },
  'x-gateway-cloud-c-session-token': { description: 'Bedrock: session token.', schema: string },
};
/** Component names of {@link REQUEST_HEADERS}. */
const headerComponent = (header: string) => header.replace(/^x-gateway-/, 'Gateway-');

const responseHeaders = {
  'x-gateway-trace-id': { $ref: '#/components/headers/TraceId' },
  'x-gateway-provider': { $ref: '#/components/headers/Provider' },
  'server-timing': { $ref: '#/components/headers/ServerTiming' },
  'x-gateway-route-target': { $ref: '#/components/headers/RouteTarget' },
  'x-gateway-attempts': { $ref: '#/components/headers/Attempts' },
  'x-gateway-cache': { $ref: '#/components/headers/Cache' },
  age: { $ref: '#/components/headers/Age' },
};

/** The statuses the gateway answers itself, each with the error shape; `default` is an upstream's own error. */
const ERROR_STATUSES: Record<string, string> = {
  400: 'Invalid request: `param` names the field or header, `code` says why',
  401: 'Missing or wrong x-gateway-api-key (authentication_error)',
  403: 'The key may not do this: budget, model or provider not allowed, guardrail refusal (permission_error)',
  404: 'Not found',
  408: 'The request body arrived too slowly',
  413: 'The request body is over the limit (25 MB by default; 9 MB for image uploads)',
  429: 'Rate limited by the key\'s limits (`Retry-After`)',
  502: 'The upstream is unreachable or its answer is broken (upstream_error)',
  503: 'The gateway\'s memory budget is spent (overloaded_error; `Retry-After`)',
  504: 'The upstream deadline passed (timeout_error), or `x-gateway-cache: only-if-cached` found no answer (cache_miss_error, code `cache_miss`)',
};

function errorResponses(extra: Record<string, string> = {}, schema = 'ErrorBody'): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, description] of Object.entries({ ...ERROR_STATUSES, ...extra })) {
    responses[status] = { description, headers: { 'retry-after': { $ref: '#/components/headers/RetryAfter' } }, ...json(ref(schema)) };
  }
  responses.default = { description: "An upstream's own error: its status and Retry-After kept, its body mapped to the error shape with `provider`.", ...json(ref(schema)) };
  return responses;
}

const headerParameters = Object.keys(REQUEST_HEADERS).map((header) => ({ $ref: `#/components/parameters/${headerComponent(header)}` }));

interface OperationSpec {
  id: string;
  summary: string;
  description?: string;
  request?: { mediaType: 'application/json' | 'multipart/form-data'; schema: string };
  ok: Record<string, unknown>;
  /** Statuses this operation answers beyond {@link ERROR_STATUSES}. */
  errors?: Record<string, string>;
  /** The error body's schema when the route's protocol has its own (default `ErrorBody`). */
  errorSchema?: string;
}

function operation(spec: OperationSpec): Record<string, unknown> {
  return {
    operationId: spec.id,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: ['v1'],
    security: [{ gatewayKey: [] }],
    parameters: headerParameters,
    ...(spec.request ? { requestBody: { required: true, content: { [spec.request.mediaType]: { schema: ref(spec.request.schema) } } } } : {}),
    responses: { 200: { description: 'Success', headers: responseHeaders, ...spec.ok }, ...errorResponses(spec.errors, spec.errorSchema) },
  };
}

const okJson = (schema: string) => json(ref(schema));

const v1Paths = {
  '/v1/chat/completions': {
    post: operation({
      id: 'createChatCompletion',
      summary: 'Chat completion, plain or streamed (server-sent events)',
      request: { mediaType: 'application/json', schema: 'ChatCompletionRequest' },
      ok: { content: { 'application/json': { schema: ref('ChatCompletion') }, 'text/event-stream': { schema: { type: 'string', description: 'Events of ChatCompletionChunk (#/components/schemas/ChatCompletionChunk), then `data: [DONE]`.' } } } },
    }),
  },
  '/v1/responses': {
    post: operation({
      id: 'createResponse',
      summary: 'The OpenAI Responses API on every provider (native on OpenAI and Azure OpenAI, translated elsewhere), plain or streamed',
      description: 'See docs/protocols.md. A built-in tool the provider cannot run is dropped and named in the `x-gateway-dropped-tools` response header (or refused, with `responses.builtInTools: refuse`).',
      request: { mediaType: 'application/json', schema: 'ResponseCreateRequest' },
      ok: { content: { 'application/json': { schema: ref('Response') }, 'text/event-stream': { schema: { type: 'string', description: 'The Responses events (`event:` named), `sequence_number` increasing, ending with response.completed, response.incomplete or response.failed.' } } } },
    }),
  },
  '/v1/responses/{response_id}': {
    get: storedResponse('getResponse', 'A stored response (404 for another key\'s)', okJson('Response')),
    delete: storedResponse('deleteResponse', 'Deletes a stored response (404 for another key\'s)', json({ type: 'object', properties: { id: string, object: { const: 'response' }, deleted: { type: 'boolean' } } })),
  },
  '/v1/responses/{response_id}/input_items': {
    get: storedResponse('listResponseInputItems', 'The items that made a stored response: its conversation, then its input (`limit`, `order`, `after` query parameters)', json({ type: 'object', properties: { object: { const: 'list' }, data: { type: 'array', items: { type: 'object' } }, first_id: nullable(string), last_id: nullable(string), has_more: { type: 'boolean' } } })),
  },
  '/v1/completions': {
    post: operation({
      id: 'createCompletion',
      summary: 'Text completion, plain or streamed',
      request: { mediaType: 'application/json', schema: 'CompletionRequest' },
      ok: { content: { 'application/json': { schema: ref('Completion') }, 'text/event-stream': { schema: string } } },
    }),
  },
  '/v1/embeddings': {
    post: operation({ id: 'createEmbedding', summary: 'Embeddings', request: { mediaType: 'application/json', schema: 'EmbeddingRequest' }, ok: okJson('EmbeddingList') }),
  },
  '/v1/images/generations': {
    post: operation({ id: 'createImage', summary: 'Generate images', request: { mediaType: 'application/json', schema: 'ImageGenerateRequest' }, ok: okJson('ImagesResponse') }),
  },
  '/v1/images/edits': {
    post: operation({ id: 'createImageEdit', summary: 'Edit an image (multipart)', request: { mediaType: 'multipart/form-data', schema: 'ImageEditRequest' }, ok: okJson('ImagesResponse') }),
  },
  '/v1/images/variations': {
    post: operation({ id: 'createImageVariation', summary: 'Variations of an image (multipart)', request: { mediaType: 'multipart/form-data', schema: 'ImageVariationRequest' }, ok: okJson('ImagesResponse') }),
  },
  '/v1/audio/speech': {
    post: operation({
      id: 'createSpeech',
      summary: 'Text to speech; the audio is streamed as the provider produces it',
      request: { mediaType: 'application/json', schema: 'SpeechRequest' },
      ok: { content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
    }),
  },
  '/v1/audio/transcriptions': {
    post: operation({
      id: 'createTranscription',
      summary: 'Transcribe audio (multipart); the answer is relayed as the provider sent it',
      request: { mediaType: 'multipart/form-data', schema: 'AudioRequest' },
      ok: { content: { 'application/json': { schema: ref('Transcription') }, 'text/plain': { schema: string } } },
    }),
  },
  '/v1/audio/translations': {
    post: operation({
      id: 'createTranslation',
      summary: 'Translate audio to English (multipart); the answer is relayed as the provider sent it',
      request: { mediaType: 'multipart/form-data', schema: 'AudioRequest' },
      ok: { content: { 'application/json': { schema: ref('Transcription') }, 'text/plain': { schema: string } } },
    }),
  },
  '/v1/models': {
    get: operation({ id: 'listModels', summary: "The provider's models, in the OpenAI list shape", ok: okJson('ModelList') }),
  },
  '/v1/messages': {
    post: operation({
      id: 'createMessage',
      summary: 'Anthropic Messages API, plain or streamed, on every provider with chat (docs/protocols.md)',
      description: 'The gateway key may also come in `x-api-key` or as the Bearer token. `anthropic-version` and `anthropic-beta` go to providers that take the API natively.',
      request: { mediaType: 'application/json', schema: 'MessagesRequest' },
      ok: { content: { 'application/json': { schema: ref('Message') }, 'text/event-stream': { schema: { type: 'string', description: 'Named events: message_start, content_block_start/delta/stop, message_delta, message_stop, ping, error.' } } } },
      errorSchema: 'MessagesError',
    }),
  },
  '/v1/messages/count_tokens': {
    post: operation({
      id: 'countMessageTokens',
      summary: 'Input tokens of a Messages request: counted by the provider where it can, else estimated (docs/protocols.md)',
      request: { mediaType: 'application/json', schema: 'MessagesCountTokensRequest' },
      ok: okJson('MessagesTokenCount'),
      errorSchema: 'MessagesError',
    }),
  },
  '/v1/{path}': passthroughPath(),
};

/** An endpoint of the stored responses: the gateway key only (its security), no provider headers; the id in the path. */
function storedResponse(id: string, summary: string, ok: Record<string, unknown>): Record<string, unknown> {
  const spec = operation({ id, summary, ok });
  return { ...spec, parameters: [{ name: 'response_id', in: 'path', required: true, schema: string }] };
}

/** Any other path under /v1/: the pass-through (GET, POST, PUT, DELETE; other methods 405). */
function passthroughPath(): Record<string, unknown> {
  const description =
    "Any other path under /v1/ (it may hold slashes: /v1/files/{id}/content, /v1/batches, …) is sent to the provider's base URL plus the path, query kept, with the provider's auth applied; the answer is returned as received (status, headers minus hop-by-hop ones, bytes), streamed both ways. Other methods get 405. A caller under a guardrail policy gets 403 `passthrough_not_judged` unless the policy allows unjudged pass-through.";
  const pathParameter = { name: 'path', in: 'path', required: true, description: 'The rest of the path', schema: string };
  const passthrough = (method: string) => {
    const spec = operation({
      id: `passthrough${method}`,
      summary: `Pass-through ${method.toUpperCase()}`,
      description,
      ok: { content: { '*/*': { schema: {} } } },
      errors: { 405: 'Pass-through accepts GET, POST, PUT and DELETE only (method_not_allowed)' },
    });
    return { ...spec, parameters: [pathParameter, ...headerParameters] };
  };
  return {
    get: passthrough('Get'),
    post: { ...passthrough('Post'), requestBody: { content: { '*/*': { schema: {} } } } },
    put: { ...passthrough('Put'), requestBody: { content: { '*/*': { schema: {} } } } },
    delete: passthrough('Delete'),
  };
}

/** Request schemas of the `/v1` operations, by component name (the test compiles them with ajv). */
export const v1RequestSchemas: Record<string, Schema> = {
  ChatCompletionRequest: chatRequest,
  CompletionRequest: completionRequest,
  EmbeddingRequest: embeddingRequest,
  ImageGenerateRequest: imageGenerateRequest,
  SpeechRequest: speechRequest,
  ImageEditRequest: imageEditRequest,
  ImageVariationRequest: imageVariationRequest,
  AudioRequest: audioRequest,
  MessagesRequest: messagesSchemas.MessagesRequest,
  MessagesCountTokensRequest: messagesSchemas.MessagesCountTokensRequest,
};

const header = (description: string, schema: Schema = string) => ({ description, schema });

const v1Components = {
  securitySchemes: {
    gatewayKey: { type: 'apiKey', in: 'header', name: 'x-gateway-api-key', description: 'The account API key (gw-…) or a virtual key (vk-…).' },
  },
  parameters: Object.fromEntries(
    Object.entries(REQUEST_HEADERS).map(([name, parameter]) => [headerComponent(name), { name, in: 'header', required: false, ...parameter }]),
  ),
  headers: {
    TraceId: header('The request\'s trace id (yours, or generated).'),
    Provider: header('The provider that answered.'),
    ServerTiming: header('`gateway;dur=…, upstream;dur=…` in ms.'),
    RouteTarget: header('The route target that answered (routed requests).'),
    Attempts: header('How many upstream attempts a routed request took.', { type: 'string', pattern: '^\\d+$' }),
    RetryAfter: header('Seconds to wait before retrying (429, 503, and an upstream\'s own).'),
    Cache: header('What the response cache did, when it applies to the request: HIT, SEMANTIC-HIT, MISS, BYPASS or REFRESH.', { enum: ['HIT', 'SEMANTIC-HIT', 'MISS', 'BYPASS', 'REFRESH'] }),
    Age: header('On a cache hit: seconds since the answer was stored.', { type: 'string', pattern: '^\\d+$' }),
  },
  schemas: { ...v1RequestSchemas, ...responseSchemas, ...messagesSchemas },
};

/** The admin operations, each given the admin API's security (the merged document has none at the top, since /v1 keys differ and /health and /openapi.json need none). */
function adminPaths(): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [path, item] of Object.entries(adminOpenApi.paths)) {
    const operations: Record<string, unknown> = {};
    for (const [method, op] of Object.entries(item as Record<string, Record<string, unknown>>)) {
      operations[method] = { security: adminOpenApi.security, tags: ['admin'], ...op };
    }
    paths[path] = operations;
  }
  return paths;
}

const publicPaths = {
  '/health': { get: { operationId: 'health', summary: 'Liveness (no key)', security: [], responses: { 200: { description: 'Up', ...json({ type: 'object', properties: { status: { const: 'ok' } } }) } } } },
  '/openapi.json': { get: { operationId: 'openApi', summary: 'This document (no key)', security: [], responses: { 200: { description: 'The OpenAPI document', ...json({ type: 'object' }) } } } },
};

/** Each component section of both parts; the names of the two parts never collide (a test checks). */
function mergeComponents(...parts: object[]): Record<string, Record<string, unknown>> {
  const merged: Record<string, Record<string, unknown>> = {};
  for (const part of parts) {
    for (const [section, entries] of Object.entries(part)) merged[section] = { ...merged[section], ...(entries as Record<string, unknown>) };
  }
  return merged;
}

/** The one OpenAPI 3.1 document of the gateway: `/v1`, `/admin`, `/health`, served at `GET /openapi.json`. */
export const gatewayOpenApi = {
  openapi: '3.1.0',
  info: {
    title: 'LLM gateway',
    version: '1.0.0',
    description:
      'The unified OpenAI-shaped API under /v1 (any provider, chosen by x-gateway-provider, a virtual key or a route) and the admin API under /admin. Every gateway error is `{"error": {"message", "type", "param", "code"}}`.',
  },
  tags: [
    { name: 'v1', description: 'The unified API; the key goes in x-gateway-api-key.' },
    { name: 'admin', description: adminOpenApi.info.description },
  ],
  paths: { ...publicPaths, ...v1Paths, ...adminPaths() },
  components: mergeComponents(adminOpenApi.components, v1Components),
};
