/**
 * The OpenAPI paths and schemas of the usage reports (`/admin/usage`, `/admin/usage/summary`, served
 * by core/admin/logs.ts), spread into the admin API's document (core/admin/openapi.ts).
 */
const error = { $ref: '#/components/responses/Error' };
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The period of a usage answer: a named range ending now (or at `to`), or `from` and `to`. */
const usagePeriodParameters = [
  { name: 'range', in: 'query', schema: { enum: ['hour', 'day', 'week'], default: 'day' }, description: 'A period ending with the bucket that holds `to` (default now). Not with `from`.' },
  { name: 'from', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'Start of a custom period (inclusive); needs `to`; at most 366 days.' },
  { name: 'to', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'End of a custom period (exclusive), or the moment a named range ends at.' },
];
const usageGroupParameter = {
  name: 'group_by',
  in: 'query',
  schema: { type: 'string', pattern: '^(none|provider|model|key|user|team|user_id|metadata\\..{1,128})$', default: 'none' },
  description:
    '`user` is the request\'s `user` field (the end user); `team` the key\'s team (`organization` for shared keys); `user_id` the gateway user or service account owning the key; `metadata.<key>` the value of one x-gateway-metadata key (a tag). Rows without a value form the group `(none)`.',
};
const number = { type: 'number' };
const nullableNumber = { type: ['number', 'null'] };
/** What a period (or a group over the period) counts. */
const usageFigures = {
  requests: { type: 'integer' },
  errors: { type: 'integer', description: 'Answers with status 400 or more' },
  error_rate: { ...nullableNumber, description: 'errors / requests; null without requests' },
  p50_ms: { ...nullableNumber, description: 'Latency median over the period; null without requests' },
  p95_ms: nullableNumber,
  prompt_tokens: { type: 'integer' },
  completion_tokens: { type: 'integer' },
  cost_usd: number,
  cache_hits: { type: 'integer' },
  cache_misses: { type: 'integer' },
  cache_hit_rate: { ...nullableNumber, description: 'hits / (hits + misses); null without cache lookups' },
  cache_saved_usd: number,
};
const usageGroup = { group: { type: 'string' }, label: { type: 'string', description: 'Grouped by key: the key\'s name' } };

export const usageAdminPaths = {
  '/admin/usage': {
    get: {
      summary: 'Usage over time in buckets, split by a column or a metadata key, with totals per group',
      parameters: [...usagePeriodParameters, usageGroupParameter],
      responses: { 200: { description: 'Series and totals', ...json(ref('UsageReport')) }, 400: error, 401: error, 403: error },
    },
  },
  '/admin/usage/summary': {
    get: {
      summary: 'Headline figures of a period against the previous period of the same length, and the top keys, end users and models by spend',
      parameters: usagePeriodParameters,
      responses: { 200: { description: 'The figures', ...json(ref('UsageSummary')) }, 400: error, 401: error, 403: error },
    },
  },
};

export const usageAdminSchemas = {
  UsageReport: {
    type: 'object',
    properties: {
      range: { enum: ['hour', 'day', 'week', 'custom'] },
      group_by: { type: 'string' },
      from: { type: 'string', format: 'date-time' },
      to: { type: 'string', format: 'date-time' },
      bucket_seconds: { type: 'integer' },
      series: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            ...usageGroup,
            points: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  t: { type: 'string', format: 'date-time', description: 'Bucket start' },
                  requests: { type: 'integer' },
                  errors: { type: 'integer' },
                  p50_ms: number,
                  p95_ms: number,
                  prompt_tokens: { type: 'integer' },
                  completion_tokens: { type: 'integer' },
                  cost_usd: number,
                  cache_hits: { type: 'integer' },
                  cache_misses: { type: 'integer' },
                  cache_saved_usd: number,
                },
              },
            },
          },
        },
      },
      totals: { type: 'array', description: 'One row per group over the whole period, most requests first', items: { type: 'object', properties: { ...usageGroup, ...usageFigures } } },
      cache: { type: 'object', properties: { hits: { type: 'integer' }, misses: { type: 'integer' }, hit_rate: nullableNumber, saved_usd: number } },
    },
  },
  UsageSummary: {
    type: 'object',
    properties: {
      range: { enum: ['hour', 'day', 'week', 'custom'] },
      current: ref('UsagePeriod'),
      previous: { ...ref('UsagePeriod'), description: 'The period of the same length just before' },
      top: {
        type: 'object',
        description: 'The 10 groups with the most spend in the current period; requests without a key, end user or model (the `(none)` group) are not ranked',
        properties: Object.fromEntries(['keys', 'users', 'models'].map((name) => [name, { type: 'array', items: { type: 'object', properties: { ...usageGroup, cost_usd: number, requests: { type: 'integer' } } } }])),
      },
    },
  },
  UsagePeriod: {
    type: 'object',
    properties: { from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' }, ...usageFigures },
  },
};
