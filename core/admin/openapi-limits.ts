/**
 * The OpenAPI description of limits by level (docs/limits.md#levels): the limits object every level
 * takes, the rules a key or team adds, the organization's own limits and the refusal's
 * `error.budget`. Spread into the admin document (core/admin/openapi.ts).
 */
const error = { $ref: '#/components/responses/Error' };
const count = (description: string) => ({ type: 'integer', minimum: 0, description });

/** What every level's limits object holds. */
const levelFields = {
  budget_usd: { type: 'number', minimum: 0 },
  budget_period: { enum: ['total', 'day', 'week', 'month'], default: 'total', description: 'UTC calendar periods (a week starts on Monday)' },
  soft_budget_usd: { type: 'number', minimum: 0, description: 'Spend in budget_period that raises a `budget.soft` alert and refuses nothing' },
  requests_per_minute: count('Sliding 60-second window'),
  requests_per_day: count('UTC calendar day'),
  tokens_per_minute: count('Input + output tokens in a sliding 60-second window: estimated at admission, corrected by the answer’s usage'),
  max_concurrent: count('Requests in flight at once; one more is refused at once (429 too_many_concurrent_requests)'),
};

export const limitsOpenApiSchemas = {
  LevelLimits: { type: 'object', additionalProperties: false, properties: levelFields, description: 'The limits of one level: a user, a service account, the organization, or a rule’s end user or tag value' },
  LimitRules: {
    type: 'object',
    properties: {
      end_users: { $ref: '#/components/schemas/LevelLimits', description: 'Applied to each end user (the request’s user, a Messages metadata.user_id, or vault.endUserHeader) separately' },
      tags: {
        type: 'object',
        description: 'Per x-gateway-metadata key: limits per value, and "*" for each other value separately',
        additionalProperties: { type: 'object', additionalProperties: { $ref: '#/components/schemas/LevelLimits' } },
      },
    },
  },
  TeamLimits: { allOf: [{ $ref: '#/components/schemas/LevelLimits' }, { $ref: '#/components/schemas/LimitRules' }], description: 'A team’s limits: on all its keys’ requests together, plus rules for its end users and tags' },
  LevelRefusal: {
    type: 'object',
    description: 'error.budget of a refusal by a limit (403 budget_exceeded, 429 rate_limit_exceeded, tokens_per_minute_exceeded, too_many_concurrent_requests)',
    required: ['level', 'level_id', 'limit'],
    properties: {
      level: { enum: ['organization', 'team', 'user', 'key', 'end_user', 'tag'] },
      level_id: { type: 'string', description: 'The key, team, user or service account id; `organization`; the end user; `<metadata key>=<value>`' },
      limit: { enum: ['budget_usd', 'requests_per_minute', 'requests_per_day', 'tokens_per_minute', 'max_concurrent'] },
      limit_value: { type: 'number' },
      used: { type: 'number', description: 'Requests, tokens or requests in flight counted against the limit' },
      request_tokens: { type: 'integer', description: 'The refused request’s token estimate (tokens_per_minute)' },
      spent_usd: { type: 'number' },
      reserved_usd: { type: 'number' },
      budget_usd: { type: 'number' },
      period: { enum: ['total', 'day', 'week', 'month'] },
      resets_at: { type: ['string', 'null'], format: 'date-time' },
      request_estimate_usd: { type: 'number' },
    },
  },
};

export const limitsOpenApiPaths = {
  '/admin/organization': {
    get: {
      summary: 'The organization’s own limits (the level above every team); null when none are set',
      responses: { 200: { description: 'Its limits', content: { 'application/json': { schema: { type: 'object', properties: { limits: { oneOf: [{ $ref: '#/components/schemas/LevelLimits' }, { type: 'null' }] } } } } } }, 401: error, 403: error },
    },
    patch: {
      summary: 'Set the organization’s limits (organization.write); null removes them. Applies on every instance within a second.',
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['limits'], additionalProperties: false, properties: { limits: { oneOf: [{ $ref: '#/components/schemas/LevelLimits' }, { type: 'null' }] } } } } } },
      responses: { 200: { description: 'The limits now in force', content: { 'application/json': { schema: { type: 'object', properties: { limits: { oneOf: [{ $ref: '#/components/schemas/LevelLimits' }, { type: 'null' }] } } } } } }, 400: error, 401: error, 403: error },
    },
  },
};
