/**
 * The request schemas of the unified `/v1` API and the small schema builders the OpenAPI document
 * is written with, used by core/api/openapi.ts. They state the bounds the validators enforce
 * (core/api/*-schema.ts, multipart-operations.ts).
 */
import { IMAGE_MODEL_A, IMAGE_MODEL_B } from './images-generate-schema.js';
import { SPEECH_FORMATS, SPEECH_MODELS, SPEECH_VOICES } from './speech-schema.js';
import { INPUT_AUDIO_FORMATS } from './chat-content-schema.js';
import { BASE64_PATTERN, DATA_URL_PATTERN, NAME_PATTERN } from './validate.js';
import { toolCall, type Schema } from './openapi-answers.js';

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type, 'null'] });
export const json = (schema: Schema) => ({ content: { 'application/json': { schema } } });
export const string: Schema = { type: 'string' };
export const nonEmpty: Schema = { type: 'string', minLength: 1 };
export const boolean: Schema = { type: 'boolean' };
export const name: Schema = { type: 'string', pattern: NAME_PATTERN.source };
export const anyObject: Schema = { type: 'object' };
export const range = (type: 'number' | 'integer', minimum?: number, maximum?: number): Schema => ({
  type,
  ...(minimum === undefined ? {} : { minimum }),
  ...(maximum === undefined ? {} : { maximum }),
});
/** True when the object has `field` and it matches `schema` (an `if` that an absent field does not satisfy). */
export const has = (field: string, schema: Schema = {}): Schema => ({ required: [field], properties: { [field]: schema } });

// JSON numbers are doubles: the signed 64-bit bounds are ±2^63 (as core/api/validate.ts).
export const seed = nullable(range('integer', -(2 ** 63), 2 ** 63));
export const penalty = nullable(range('number', -2, 2));
export const logitBias: Schema = {
  type: ['object', 'null'],
  description: 'Token id → bias from -100 to 100.',
  propertyNames: { pattern: '^\\d+$' },
  additionalProperties: range('integer', -100, 100),
};
export const stop: Schema = {
  description: 'Up to 4 sequences where the model stops.',
  anyOf: [{ type: ['string', 'null'] }, { type: 'array', minItems: 1, maxItems: 4, items: string }],
};
export const streamOptions: Schema = { type: ['object', 'null'], properties: { include_usage: boolean }, description: 'Only with `stream: true`.' };
/** `stream_options` is refused unless `stream` is true. */
export const streamOptionsNeedStream: Schema = { if: has('stream_options', { type: 'object' }), then: has('stream', { const: true }) };

export const tokenIds: Schema = { type: 'array', minItems: 1, items: range('integer', 0) };
/** `prompt` and embedding `input`: a string, or a non-empty array of strings, token ids or token-id arrays (never mixed). */
export const textOrTokens = (maxInputs?: number, stringSchema: Schema = string): Schema => {
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
export const filePart: Schema = {
  type: 'object',
  properties: {
    file_data: { type: 'string', pattern: DATA_URL_PATTERN.source, description: 'A base64 data URL: `data:application/pdf;base64,...`.' },
    file_id: nonEmpty,
    filename: string,
  },
  anyOf: [{ required: ['file_data'] }, { required: ['file_id'] }],
};

/** An `input_audio` part's `input_audio`: base64 audio (no data URL prefix) and its format. */
export const inputAudioPart: Schema = {
  type: 'object',
  required: ['data', 'format'],
  properties: { data: { type: 'string', pattern: BASE64_PATTERN.source }, format: { enum: [...INPUT_AUDIO_FORMATS] } },
};

export function contentPart(types: readonly string[]): Schema {
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

export const content = (types: readonly string[], allowNull = false): Schema => ({
  anyOf: [
    { type: allowNull ? ['string', 'null'] : 'string' },
    ...(types.length ? [{ type: 'array', minItems: 1, items: contentPart(types) }] : []),
  ],
});


export const message: Schema = {
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

export const functionDefinition: Schema = {
  type: 'object',
  required: ['name'],
  properties: { name, description: string, parameters: anyObject },
};

export const chatRequest: Schema = {
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

export const completionRequest: Schema = {
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

export const embeddingRequest: Schema = {
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

export const rerankRequest: Schema = {
  type: 'object',
  required: ['model', 'query', 'documents'],
  description:
    "Cohere's rerank shape. Unknown fields are kept (a provider may read its own, e.g. Cohere's `max_tokens_per_doc`, Voyage's `truncation`). `return_documents` is applied by the gateway, never sent upstream.",
  properties: {
    model: nonEmpty,
    query: nonEmpty,
    documents: {
      type: 'array',
      minItems: 1,
      maxItems: 10_000,
      items: { anyOf: [string, { type: 'object', required: ['text'], properties: { text: string } }] },
      description: 'Strings, or objects whose `text` is ranked (the other fields come back with the document).',
    },
    top_n: range('integer', 1),
    return_documents: boolean,
  },
};

export const IMAGE_SIZES_A = ['256x256', '512x512', '1024x1024'];
export const IMAGE_SIZES_B = ['1024x1024', '1792x1024', '1024x1792'];
export const nullOr = (values: readonly unknown[]): Schema => ({ enum: [null, ...values] });

export const imageGenerateRequest: Schema = {
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

export const speechRequest: Schema = {
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
export const png = { type: 'string', contentMediaType: 'image/png', description: 'A square PNG under 4 MB.' };
export const imageFormFields: Schema = {
  model: { enum: [IMAGE_MODEL_A], description: `Only ${IMAGE_MODEL_A}.` },
  n: range('integer', 1, 10),
  size: { enum: IMAGE_SIZES_A },
  response_format: { enum: ['url', 'b64_json'] },
  user: string,
};
export const imageEditRequest: Schema = {
  type: 'object',
  required: ['image', 'prompt'],
  properties: {
    image: { ...png, description: 'A square PNG under 4 MB, with an alpha channel unless `mask` is sent.' },
    mask: { ...png, description: 'A PNG under 4 MB with the dimensions of `image`.' },
    prompt: { type: 'string', minLength: 1, maxLength: 1000 },
    ...imageFormFields,
  },
};
export const imageVariationRequest: Schema = { type: 'object', required: ['image'], properties: { image: png, ...imageFormFields } };
export const audioRequest: Schema = {
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
