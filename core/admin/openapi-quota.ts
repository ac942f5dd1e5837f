/**
 * The OpenAPI paths and schemas of providers' quotas shared between teams (docs/limits.md): the
 * `quota` object of credentials and route targets, `GET /admin/quotas`, and the teams' bodies with
 * their `quota_weight`; spread into the admin API's document (core/admin/openapi.ts).
 */
const error = { $ref: '#/components/responses/Error' };
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };

const teamFields = {
  name: { type: 'string', minLength: 1, maxLength: 128 },
  description: { type: ['string', 'null'], maxLength: 2048 },
  metadata: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
  allowed_providers: { type: ['array', 'null'], items: { type: 'string' } },
  allowed_models: { type: ['array', 'null'], items: { type: 'string' } },
  allowed_routes: { type: ['array', 'null'], items: { type: 'string' } },
  allowed_credentials: { type: ['array', 'null'], items: { type: 'string' } },
  guardrail_policy: { type: ['string', 'null'] },
  quota_weight: {
    type: ['number', 'null'],
    exclusiveMinimum: 0,
    maximum: 1000,
    default: 1,
    description: "The team's weight when a provider's quota is shared between the teams using it (docs/limits.md); null on a PATCH goes back to 1",
  },
};

export const quotaAdminPaths = {
  '/admin/quotas': {
    get: {
      summary: "Providers' quotas: what each team holds in the shared window, and this instance's queue (waiting, waits, refusals since it started)",
      responses: { 200: { description: 'The quotas', ...json(ref('QuotaList')) }, 401: error, 403: error },
    },
  },
  '/admin/teams': {
    post: {
      summary: 'Create a team (docs/organizations.md)',
      requestBody: { required: true, ...json(ref('TeamInput')) },
      responses: { 201: { description: 'Created', ...json(ref('Team')) }, 400: error, 401: error, 403: error, 409: error },
    },
  },
  '/admin/teams/{id}': {
    patch: {
      summary: 'Change a team; null removes an optional field',
      parameters: [idParameter],
      requestBody: { required: true, ...json(ref('TeamPatch')) },
      responses: { 200: { description: 'Changed', ...json(ref('Team')) }, 400: error, 401: error, 403: error, 404: error, 409: error },
    },
  },
};

export const quotaAdminSchemas = {
  ProviderQuota: {
    type: 'object',
    additionalProperties: false,
    description:
      "A provider account's own limits (docs/limits.md): the gateway keeps its traffic within them and shares them between teams by `quota_weight`. Per-minute limits are sliding 60-second windows; give at least one of the three limits.",
    properties: {
      requests_per_minute: { type: 'integer', minimum: 1 },
      tokens_per_minute: { type: 'integer', minimum: 1, description: 'Input plus output tokens: estimated when a request is sent (prompt bound plus max_tokens), corrected by the answer’s usage' },
      max_concurrent: { type: 'integer', minimum: 1, description: 'Requests in flight at once (a stream until it ends)' },
      max_wait_ms: { type: 'integer', minimum: 0, maximum: 600000, default: 5000, description: 'How long a request over its team’s share waits for room; then 429 quota_wait_exceeded with Retry-After' },
    },
  },
  CredentialPatch: {
    type: 'object',
    additionalProperties: false,
    required: ['quota'],
    properties: { quota: { oneOf: [ref('ProviderQuota'), { type: 'null' }], description: 'null removes the quota' } },
  },
  QuotaList: {
    type: 'object',
    properties: {
      object: { const: 'list' },
      window_ms: { type: 'integer' },
      data: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            key: { type: 'string', description: '`cred:<credential id>` or `route:<route>/<target path>`' },
            credential_id: { type: 'string' },
            name: { type: 'string' },
            quota: ref('ProviderQuota'),
            teams: {
              type: 'array',
              description: 'Every instance’s counts in the current window',
              items: {
                type: 'object',
                properties: { team: { type: 'string' }, weight: { type: 'number' }, active: { type: 'boolean' }, requests: { type: 'integer' }, tokens: { type: 'integer' }, concurrent: { type: 'integer' } },
              },
            },
            queue_depth: { type: 'integer', description: 'Requests waiting on this instance now' },
            granted: { type: 'integer' },
            waits: { type: 'integer', description: 'Requests that queued on this instance since it started' },
            wait_seconds_total: { type: 'number' },
            refused: { type: 'integer', description: '429 quota_wait_exceeded and quota_queue_full on this instance since it started' },
          },
        },
      },
    },
  },
  TeamInput: { type: 'object', additionalProperties: false, required: ['name'], properties: teamFields },
  TeamPatch: { type: 'object', additionalProperties: false, properties: teamFields },
  Team: {
    type: 'object',
    properties: { id: { type: 'string' }, ...teamFields, quota_weight: { type: 'number', description: 'Its weight in shared provider quotas (1 unless set)' }, created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' } },
  },
};
