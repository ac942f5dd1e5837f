/**
 * The OpenAPI description of the request log routes (core/admin/logs.ts, core/admin/logs-stream.ts),
 * spread into the admin document (core/admin/openapi.ts).
 */
const error = { $ref: '#/components/responses/Error' };
const text = { type: 'string', minLength: 1, maxLength: 256 };

/** The list's filters, shared by the list, the export and the tail. */
const filters = [
  { name: 'from', in: 'query', required: false, schema: { type: 'string', format: 'date-time' }, description: 'Inclusive lower bound of the time' },
  { name: 'to', in: 'query', required: false, schema: { type: 'string', format: 'date-time' }, description: 'Exclusive upper bound (not on the tail)' },
  { name: 'status_class', in: 'query', required: false, schema: { enum: ['2xx', '3xx', '4xx', '5xx'] } },
  {
    name: 'errors',
    in: 'query',
    required: false,
    schema: { enum: ['true', 'false'] },
    description: 'true: only failed requests, status 400 and above or an error recorded (a stream that broke after its 200 status)',
  },
  {
    name: 'q',
    in: 'query',
    required: false,
    schema: text,
    description:
      'Free-text search over the stored (redacted) request and response bodies: the string values of a JSON body (not its keys or numbers), a body that is not JSON as text. Every word must occur, case-insensitive, without stemming; punctuation inside a word makes adjacent tokens (`gpt-4o`). No operator syntax. Rows without stored bodies never match.',
  },
  { name: 'provider', in: 'query', required: false, schema: text },
  { name: 'model', in: 'query', required: false, schema: text },
  { name: 'key', in: 'query', required: false, schema: text, description: 'A virtual key id, or `account`' },
  { name: 'trace_id', in: 'query', required: false, schema: text },
  { name: 'metadata_key', in: 'query', required: false, schema: text },
  { name: 'metadata_value', in: 'query', required: false, schema: text, description: 'Needs metadata_key' },
];
const limit = { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 } };
const cursor = { name: 'cursor', in: 'query', required: false, schema: { type: 'string' }, description: 'next_cursor of the previous page' };
const csrf = {
  name: 'csrf',
  in: 'query',
  required: false,
  schema: { type: 'string' },
  description: 'With the dashboard session cookie instead of the account key: the session’s CSRF token (a link or an EventSource cannot send x-gateway-csrf)',
};

export const logsOpenApiPaths = {
  '/admin/logs': {
    get: {
      summary: 'Logged requests, newest first, one page at a time (keyset pagination)',
      parameters: [...filters, limit, cursor],
      responses: {
        200: {
          description: 'A page',
          content: {
            'application/json': {
              schema: { type: 'object', required: ['data', 'next_cursor'], properties: { data: { type: 'array', items: { $ref: '#/components/schemas/LogRow' } }, next_cursor: { type: ['string', 'null'] } } },
            },
          },
        },
        400: error,
        401: error,
        403: error,
      },
    },
  },
  '/admin/logs/export': {
    get: {
      summary: 'Every row the filters select, newest first, streamed as a CSV or JSON-lines attachment (bodies on request)',
      description:
        'CSV: a header row, CRLF line ends, RFC 4180 quoting; a text starting with =, +, -, @, a tab or a carriage return is prefixed with an apostrophe (no formula runs in a spreadsheet); metadata, guardrails are JSON; route, attempts and route_target summarise routing. JSONL: one list row per line. Rows logged after the export started are not in it.',
      parameters: [
        { name: 'format', in: 'query', required: true, schema: { enum: ['csv', 'jsonl'] } },
        ...filters,
        {
          name: 'bodies',
          in: 'query',
          required: false,
          schema: { enum: ['true', 'false'], default: 'false' },
          description: 'true: each row also carries its stored (redacted, capped) request_body and response_body (null when none); CSV gains those two columns last',
        },
        csrf,
      ],
      responses: {
        200: {
          description: 'The rows (Content-Disposition: attachment; filename="gateway-logs-<time>.<format>")',
          content: { 'text/csv': { schema: { type: 'string' } }, 'application/x-ndjson': { schema: { type: 'string' } } },
        },
        400: error,
        401: error,
        403: error,
      },
    },
  },
  '/admin/logs/tail': {
    get: {
      summary: 'Server-sent events of the requests logged from now on that the filters select',
      description:
        'event: ready once open; then event: log with a list row as data and its id as id, oldest first; event: store_error when a poll of the store fails. The tail reads the store about once a second, so with PostgreSQL it shows every instance’s requests. A Last-Event-ID header (the id of the last row received, as EventSource sends on reconnecting) resumes after that row when it is at most 10 minutes old. At most 16 tails per instance (429 too_many_tails).',
      parameters: [...filters.filter((parameter) => parameter.name !== 'to'), csrf],
      responses: { 200: { description: 'The event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }, 400: error, 401: error, 403: error, 429: error },
    },
  },
  '/admin/logs/{id}': {
    get: {
      summary: 'One logged request with its stored (redacted, size-capped) bodies',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        200: {
          description: 'The record',
          content: {
            'application/json': {
              schema: {
                allOf: [
                  { $ref: '#/components/schemas/LogRow' },
                  { type: 'object', properties: { request_body: { type: ['string', 'null'] }, response_body: { type: ['string', 'null'] } } },
                ],
              },
            },
          },
        },
        401: error,
        403: error,
        404: error,
      },
    },
  },
};

const nullable = (type: string) => ({ type: [type, 'null'] });

export const logsOpenApiSchemas = {
  LogRow: {
    type: 'object',
    description: 'One logged request without its bodies (docs/logs.md lists every field).',
    required: ['id', 'time', 'trace_id', 'operation', 'method', 'path', 'status', 'outcome', 'streaming', 'latency_ms', 'metadata', 'guardrails'],
    properties: {
      id: { type: 'string' },
      time: { type: 'string', format: 'date-time' },
      trace_id: { type: 'string' },
      caller_type: { enum: ['account', 'virtual-key', 'service-account', null] },
      key_id: nullable('string'),
      key_name: nullable('string'),
      provider: nullable('string'),
      model: nullable('string'),
      operation: { type: 'string' },
      method: { type: 'string' },
      path: { type: 'string' },
      status: { type: 'integer' },
      outcome: { enum: ['ok', 'error', 'stream_error', 'client_closed'] },
      error_type: nullable('string'),
      error_code: nullable('string'),
      error_message: nullable('string'),
      streaming: { type: 'boolean' },
      latency_ms: { type: 'number' },
      gateway_ms: { type: 'number' },
      upstream_ms: nullable('number'),
      ttft_ms: nullable('number'),
      prompt_tokens: nullable('integer'),
      completion_tokens: nullable('integer'),
      cached_tokens: nullable('integer'),
      reasoning_tokens: nullable('integer'),
      total_tokens: nullable('integer'),
      cost_usd: nullable('number'),
      cache_status: { enum: ['HIT', 'SEMANTIC-HIT', 'MISS', 'BYPASS', 'REFRESH', null] },
      cache_saved_usd: nullable('number'),
      metadata: { type: 'object', additionalProperties: { type: 'string' } },
      guardrails: { type: 'array', items: { type: 'object' } },
      routing: {
        type: 'object',
        description:
          'A routed request’s route and upstream attempts (absent otherwise): each attempt’s target, provider, model, status, latencyMs, and for a failed one errorCode and message (the upstream’s, secrets removed, at most 256 characters); skipped, the targets passed over ({ target, reason: breaker_open | retry_budget | attempt_cap }); routing_ms, the failed attempts and waits before the answer’s attempt (not in gateway_ms)',
      },
      dropped_fields: { type: 'array', items: { type: 'string' } },
    },
  },
};
