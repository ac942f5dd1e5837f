/**
 * The OpenAPI description of the audit trail's routes (core/audit/admin.ts), spread into the admin
 * document (core/admin/openapi.ts).
 */
const error = { $ref: '#/components/responses/Error' };
const text = { type: 'string', minLength: 1, maxLength: 256 };
const nullableText = { type: ['string', 'null'] };

export const auditOpenApiPaths = {
  '/admin/audit': {
    get: {
      summary: 'Audit events, newest first, one page at a time (docs/audit.md)',
      parameters: [
        { name: 'actor', in: 'query', required: false, schema: text, description: '`<type>:<id>` (`user:u_1`), or an id or an actor type alone (`cli`)' },
        { name: 'action', in: 'query', required: false, schema: text, description: 'One action (`keys.update`), or a family (`keys.*`)' },
        { name: 'target', in: 'query', required: false, schema: text, description: '`<type>:<id>` (`virtual-key:vk_1`), or an id or a target type alone' },
        { name: 'since', in: 'query', required: false, schema: { type: 'string', format: 'date-time' }, description: 'Inclusive lower bound of the time' },
        { name: 'until', in: 'query', required: false, schema: { type: 'string', format: 'date-time' }, description: 'Exclusive upper bound of the time' },
        { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 } },
        { name: 'cursor', in: 'query', required: false, schema: { type: 'string' }, description: 'next_cursor of the previous page' },
      ],
      responses: {
        200: {
          description: 'A page',
          content: {
            'application/json': {
              schema: { type: 'object', required: ['data', 'next_cursor'], properties: { data: { type: 'array', items: { $ref: '#/components/schemas/AuditEvent' } }, next_cursor: nullableText } },
            },
          },
        },
        400: error,
        401: error,
        403: error,
      },
    },
  },
  '/admin/audit/export': {
    get: {
      summary: 'The whole audit chain as a JSON-lines attachment, oldest first, streamed (what llm-gateway audit export writes)',
      parameters: [{ name: 'csrf', in: 'query', required: false, schema: { type: 'string' }, description: 'With the dashboard session cookie instead of the account key: the session’s CSRF token' }],
      responses: { 200: { description: 'One AuditEvent per line', content: { 'application/x-ndjson': { schema: { type: 'string' } } } }, 401: error, 403: error },
    },
  },
  '/admin/audit/verify': {
    get: {
      summary: 'Recompute the audit chain (what llm-gateway audit verify does): whole, or the first event changed, removed or inserted',
      responses: {
        200: {
          description: 'The verdict',
          content: {
            'application/json': {
              schema: {
                oneOf: [
                  { type: 'object', required: ['ok', 'count'], properties: { ok: { const: true }, count: { type: 'integer' }, head: { type: 'object', properties: { seq: { type: 'integer' }, hash: { type: 'string' } } } } },
                  {
                    type: 'object',
                    required: ['ok', 'seq', 'id', 'problem', 'reason'],
                    properties: { ok: { const: false }, seq: { type: 'integer' }, id: nullableText, problem: { enum: ['changed', 'removed', 'inserted'] }, reason: { type: 'string' } },
                  },
                ],
              },
            },
          },
        },
        401: error,
        403: error,
      },
    },
  },
};

export const auditOpenApiSchemas = {
  AuditEvent: {
    type: 'object',
    description: 'One event of the tamper-evident audit trail: `hash` is SHA-256 (hex) of the canonical JSON (sorted keys) of every other field; `prev_hash` the previous event’s hash.',
    required: ['id', 'seq', 'time', 'actor', 'action', 'target', 'changes', 'outcome', 'address', 'user_agent', 'prev_hash', 'hash'],
    properties: {
      id: { type: 'string' },
      seq: { type: 'integer', minimum: 1, description: 'Gap-free position in the chain' },
      time: { type: 'string', format: 'date-time' },
      actor: {
        type: 'object',
        required: ['type'],
        properties: { type: { enum: ['account', 'user', 'service-account', 'token', 'cli', 'system'] }, id: { type: 'string' }, label: { type: 'string' } },
      },
      action: { type: 'string', examples: ['dashboard.sign-in', 'keys.update', 'audit.retention'] },
      target: { type: ['object', 'null'], properties: { type: { type: 'string' }, id: { type: 'string' } } },
      changes: {
        type: ['object', 'null'],
        description: 'The before and after of each changed field; secrets are never included',
        additionalProperties: { type: 'object', properties: { before: {}, after: {} } },
      },
      outcome: { enum: ['success', 'denied', 'failure'] },
      address: nullableText,
      user_agent: nullableText,
      prev_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    },
  },
};
