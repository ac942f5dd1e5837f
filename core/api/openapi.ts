import { geminiSchemas } from './protocols/gemini/openapi.js';
import { messagesSchemas } from './protocols/messages/openapi.js';
import { responseSchemas, type Schema } from './openapi-answers.js';
import { audioRequest, chatRequest, completionRequest, embeddingRequest, imageEditRequest, imageGenerateRequest, imageVariationRequest, json, nullable, ref, rerankRequest, speechRequest, string } from './openapi-requests.js';

/**
 * The OpenAPI 3.1 description of the unified `/v1` API, merged with the admin API's
 * (core/admin/openapi.ts) by core/openapi.ts into the one document served at `GET /openapi.json`. The request schemas
 * state the bounds the validators enforce (core/api/*-schema.ts, multipart-operations.ts); a test
 * runs a table of valid and invalid bodies through both and asserts they agree.
 */

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
  'x-gateway-priority': { description: "This request's class in a provider quota's queue (docs/limits.md): `batch` lowers it (interactive requests leave the queue first); `interactive` keeps the key's class. Anything else is 400.", schema: { enum: ['interactive', 'batch'] } },
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

export const v1Paths = {
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
  '/v1/rerank': {
    post: operation({ id: 'createRerank', summary: 'Rerank documents against a query (Cohere, Jina, Voyage, Bedrock, compatible servers)', request: { mediaType: 'application/json', schema: 'RerankRequest' }, ok: okJson('RerankResponse') }),
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
    get: operation({ id: 'listModels', summary: "The models the caller's key may reach (the gateway's catalogue), or with x-gateway-provider the provider's own list", ok: okJson('ModelList') }),
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
  '/v1/realtime': {
    get: {
      ...operation({
        id: 'createRealtimeSession',
        summary: 'The Realtime API: a WebSocket session relayed to the provider (Upgrade: websocket; docs/protocols.md#realtime)',
        description:
          "Admitted like a request before the upgrade (key, limits, guardrail policy): a refusal is a JSON error with its status. A browser may send the gateway key as the subprotocol `openai-insecure-api-key.<key>`. Then OpenAI's Realtime events both ways; one log entry per session.",
        ok: {},
      }),
      parameters: [...headerParameters, { name: 'model', in: 'query', required: true, description: "The session's model (an Azure deployment on Azure OpenAI).", schema: { type: 'string', maxLength: 256 } }],
      responses: { 101: { description: 'Switching Protocols: the WebSocket session' }, ...errorResponses() },
    },
  },
  ...geminiPaths(),
  '/v1/{path}': passthroughPath(),
};

/**
 * The Gemini API's routes (docs/protocols.md): `/v1beta/models/{model}:{method}`, and the same under
 * `/v1/`. The model may hold slashes (a provider prefix written as path segments). The gateway key
 * may come in `x-goog-api-key` or the `key` query parameter.
 */
function geminiPaths(): Record<string, unknown> {
  const model = { name: 'model', in: 'path', required: true, description: 'The model (`gemini-2.5-flash`, or `anthropic/claude-sonnet-4-5` to name the provider).', schema: string };
  const key = { name: 'key', in: 'query', required: false, description: 'The gateway key, as Google takes its API key (never recorded).', schema: string };
  const description = 'The gateway key may come in `x-goog-api-key` or as `?key=`. Native on Gemini and Vertex AI (Gemini models), translated to chat elsewhere.';
  const method = (id: string, summary: string, request: string, ok: Record<string, unknown>, extra: Record<string, unknown>[] = []) => {
    const spec = operation({ id, summary, description, request: { mediaType: 'application/json', schema: request }, ok, errorSchema: 'GoogleError' });
    return { post: { ...spec, parameters: [model, key, ...extra, ...headerParameters] } };
  };
  const stream = { content: { 'application/json': { schema: { type: 'array', items: ref('GenerateContentResponse') } }, 'text/event-stream': { schema: { type: 'string', description: 'With `alt=sse`: one `data:` event per GenerateContentResponse piece.' } } } };
  const paths: Record<string, unknown> = {};
  for (const version of ['v1beta', 'v1']) {
    const base = `/${version}/models/{model}`;
    const suffix = version === 'v1' ? 'V1' : '';
    paths[`${base}:generateContent`] = method(`geminiGenerateContent${suffix}`, 'Gemini API generateContent on every provider with chat', 'GeminiGenerateContentRequest', okJson('GenerateContentResponse'));
    paths[`${base}:streamGenerateContent`] = method(`geminiStreamGenerateContent${suffix}`, 'Gemini API streamGenerateContent: SSE with alt=sse, else a JSON array', 'GeminiGenerateContentRequest', stream, [{ name: 'alt', in: 'query', required: false, schema: { enum: ['sse'] } }]);
    paths[`${base}:countTokens`] = method(`geminiCountTokens${suffix}`, 'Input tokens: counted by Google natively, estimated by the gateway elsewhere (never a completion)', 'GeminiCountTokensRequest', okJson('GeminiTokenCount'));
    paths[`${base}:embedContent`] = method(`geminiEmbedContent${suffix}`, 'One embedding, through the provider\'s embeddings operation', 'GeminiEmbedContentRequest', okJson('GeminiEmbedResponse'));
    paths[`${base}:batchEmbedContents`] = method(`geminiBatchEmbedContents${suffix}`, 'Embeddings of several texts, through the provider\'s embeddings operation', 'GeminiBatchEmbedContentsRequest', okJson('GeminiEmbedResponse'));
  }
  paths['/v1beta/models'] = { get: { ...operation({ id: 'geminiListModels', summary: "The provider's models as the Gemini API lists them", ok: okJson('GeminiModelList'), errorSchema: 'GoogleError' }), parameters: [key, ...headerParameters] } };
  return paths;
}

/** An endpoint of the stored responses: the gateway key only (its security), no provider headers; the id in the path. */
function storedResponse(id: string, summary: string, ok: Record<string, unknown>): Record<string, unknown> {
  const spec = operation({ id, summary, ok });
  return { ...spec, parameters: [{ name: 'response_id', in: 'path', required: true, schema: string }] };
}

/** Any other path under /v1/: the pass-through (GET, POST, PUT, DELETE; other methods 405). */
function passthroughPath(): Record<string, unknown> {
  const description =
    "Any other path under /v1/ (it may hold slashes: /v1/files/{id}/content, /v1/batches, …) is sent to the provider's base URL plus the path, query kept, with the provider's auth applied; the answer is returned as received (status, headers minus hop-by-hop ones, bytes), streamed both ways. Other methods get 405. A caller under a guardrail policy gets 403 `passthrough_not_judged` unless the policy allows unjudged pass-through. For a provider with its own batch API (Anthropic, Gemini), `/v1/files` and `/v1/batches` are served by the gateway in OpenAI's shapes and translated (docs/batches.md).";
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
  RerankRequest: rerankRequest,
  ImageGenerateRequest: imageGenerateRequest,
  SpeechRequest: speechRequest,
  ImageEditRequest: imageEditRequest,
  ImageVariationRequest: imageVariationRequest,
  AudioRequest: audioRequest,
  MessagesRequest: messagesSchemas.MessagesRequest,
  MessagesCountTokensRequest: messagesSchemas.MessagesCountTokensRequest,
  GeminiGenerateContentRequest: geminiSchemas.GeminiGenerateContentRequest,
};

const header = (description: string, schema: Schema = string) => ({ description, schema });

export const v1Components = {
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
  schemas: { ...v1RequestSchemas, ...responseSchemas, ...messagesSchemas, ...geminiSchemas },
};
