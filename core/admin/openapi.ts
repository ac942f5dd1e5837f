/**
 * The OpenAPI 3.1 description of the admin API for credentials, virtual keys, stored routes, model aliases, usage and the
 * response cache, served at `/admin/openapi.json`. Kept beside the routes it describes (core/admin/virtual-keys.ts,
 * core/cache/admin.ts, core/audit/admin.ts).
 */
import { auditOpenApiPaths, auditOpenApiSchemas } from '../audit/openapi.js';
import { limitsOpenApiPaths, limitsOpenApiSchemas } from './openapi-limits.js';
import { routeSchema } from '../routing/route-schema.js';
import { mcpAdminPaths, mcpAdminSchemas } from './openapi-mcp.js';
import { teamAdminPaths, teamAdminSchemas } from './openapi-teams.js';
import { routingAdminPaths, routingAdminSchemas } from './openapi-routing.js';
import { logsOpenApiPaths, logsOpenApiSchemas } from './logs-openapi.js';
import { usageAdminPaths, usageAdminSchemas } from './openapi-usage.js';
import { quotaAdminPaths, quotaAdminSchemas } from './openapi-quota.js';

const error = { $ref: '#/components/responses/Error' };
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const aliasParameter = { name: 'alias', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9._:/-]{1,128}$' } };
/**
 * A route: the published JSON schema (also at `/admin/routes/schema`); the gateway checks it with
 * parseRoute (400 `invalid_route` with `param`). In this document its `$defs` become components of
 * their own (`Route.strategy`, …) and its references point at them, since OpenAPI tools resolve `#`
 * against the document rather than against the schema's `$id`.
 */
const { $id: _id, $schema: _dialect, $defs, ...routeRoot } = JSON.parse(JSON.stringify(routeSchema).replaceAll('"#/$defs/', '"#/components/schemas/Route.')) as Record<string, unknown> & {
  $defs: Record<string, unknown>;
};
const routeComponents: Record<string, unknown> = {
  Route: { ...routeRoot, description: `${String(routeSchema.description)} Served alone at GET /admin/routes/schema.` },
  ...Object.fromEntries(Object.entries($defs).map(([name, schema]) => [`Route.${name}`, schema])),
};
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const list = (item: string) => ({ type: 'object', properties: { object: { const: 'list' }, data: { type: 'array', items: ref(item) } } });


export const adminOpenApi = {
  openapi: '3.1.0',
  info: {
    title: 'Gateway admin API: credentials, virtual keys, budget alerts, stored routes, model aliases and the response cache',
    version: '1.0.0',
    description:
      'Needs the account API key in x-gateway-api-key (a virtual key gets 403). Provider secrets are write-only; a virtual key value is returned only by create and rotate.',
  },
  security: [{ accountKey: [] }],
  paths: {
    '/admin/credentials': {
      post: {
        summary: 'Store a provider credential (sealed by the vault)',
        requestBody: { required: true, ...json(ref('CredentialInput')) },
        responses: { 201: { description: 'Created', ...json(ref('Credential')) }, 400: error, 401: error, 403: error },
      },
      get: {
        summary: 'List credentials sorted by name, each with the virtual keys using it (no secrets)',
        responses: { 200: { description: 'The credentials', ...json(list('CredentialWithUsers')) }, 401: error, 403: error },
      },
    },
    '/admin/credentials/{id}': {
      get: {
        summary: 'One credential and the virtual keys using it (no secret)',
        parameters: [idParameter],
        responses: { 200: { description: 'The credential', ...json(ref('CredentialWithUsers')) }, 401: error, 403: error, 404: error },
      },
      patch: {
        summary: "Set or remove the credential's provider quota (docs/limits.md); the secret changes by rotation only",
        parameters: [idParameter],
        requestBody: { required: true, ...json(ref('CredentialPatch')) },
        responses: { 200: { description: 'Changed', ...json(ref('CredentialWithUsers')) }, 400: error, 401: error, 403: error, 404: error },
      },
      delete: {
        summary: 'Delete a credential no virtual key uses',
        parameters: [idParameter],
        responses: { 204: { description: 'Deleted' }, 401: error, 403: error, 404: error, 409: error },
      },
    },
    '/admin/credentials/{id}/rotate': {
      post: {
        summary: 'Replace the secret, keeping the id: keys and routes naming the credential use the new secret from their next request, on every instance',
        parameters: [idParameter],
        requestBody: { required: true, ...json(ref('CredentialSecret')) },
        responses: { 200: { description: 'Rotated (the secret is not returned)', ...json(ref('CredentialWithUsers')) }, 400: error, 401: error, 403: error, 404: error },
      },
    },
    '/admin/alerts': {
      get: {
        summary: 'Budget alerts: keys whose spend reached 80 % or 100 % of their budget in its current period, newest first',
        responses: { 200: { description: 'The alerts', ...json(list('BudgetAlert')) }, 401: error, 403: error },
      },
    },
    '/admin/virtual-keys': {
      post: {
        summary: 'Create a virtual key; its value is in `key`, shown this once',
        requestBody: { required: true, ...json(ref('VirtualKeyInput')) },
        responses: { 201: { description: 'Created', ...json(ref('VirtualKeyWithValue')) }, 400: error, 401: error, 403: error, 409: error },
      },
      get: { summary: 'List virtual keys (masked hints, no values)', responses: { 200: { description: 'The keys', ...json(list('VirtualKey')) }, 401: error, 403: error } },
    },
    '/admin/virtual-keys/{id}': {
      get: { summary: 'One virtual key', parameters: [idParameter], responses: { 200: { description: 'The key', ...json(ref('VirtualKey')) }, 401: error, 403: error, 404: error } },
      patch: {
        summary: 'Change fields; null removes an optional one; limits are replaced whole',
        parameters: [idParameter],
        requestBody: { required: true, ...json(ref('VirtualKeyPatch')) },
        responses: { 200: { description: 'Changed', ...json(ref('VirtualKey')) }, 400: error, 401: error, 403: error, 404: error, 409: error },
      },
      delete: {
        summary: 'Delete; the value is refused with 401 on every instance from then on',
        parameters: [idParameter],
        responses: { 204: { description: 'Deleted' }, 401: error, 403: error, 404: error },
      },
    },
    '/admin/virtual-keys/{id}/rotate': {
      post: {
        summary: 'Issue a new value (returned once in `key`); the old one is refused',
        parameters: [idParameter],
        responses: { 200: { description: 'Rotated', ...json(ref('VirtualKeyWithValue')) }, 401: error, 403: error, 404: error },
      },
    },
    '/admin/virtual-keys/{id}/usage': {
      get: { summary: 'Spend, requests and what remains', parameters: [idParameter], responses: { 200: { description: 'Usage', ...json(ref('Usage')) }, 401: error, 403: error, 404: error } },
    },
    '/admin/routes': {
      post: {
        summary: 'Store a route (version 1); providers, credentials and virtual keys it names must exist',
        requestBody: { required: true, ...json(ref('RouteInput')) },
        responses: { 201: { description: 'Created', ...json(ref('StoredRoute')) }, 400: error, 401: error, 403: error, 409: error },
      },
      get: { summary: 'List stored routes (current versions)', responses: { 200: { description: 'The routes', ...json(list('StoredRoute')) }, 401: error, 403: error } },
    },
    '/admin/routes/schema': {
      get: {
        summary: 'The JSON schema (draft 2020-12) of a route; no key needed',
        security: [],
        responses: { 200: { description: 'The schema', ...json({ type: 'object' }) } },
      },
    },
    '/admin/routes/{id}': {
      get: { summary: 'The current version of a route', parameters: [idParameter], responses: { 200: { description: 'The route', ...json(ref('StoredRoute')) }, 401: error, 403: error, 404: error } },
      put: {
        summary: 'Replace the route (and its name when given; null removes it): a new version, the old ones kept',
        parameters: [idParameter],
        requestBody: { required: true, ...json(ref('RouteInput')) },
        responses: { 200: { description: 'Replaced', ...json(ref('StoredRoute')) }, 400: error, 401: error, 403: error, 404: error, 409: error },
      },
      delete: {
        summary: 'Delete the route and every version of it; 409 while a virtual key or a model alias names it',
        parameters: [idParameter],
        responses: { 204: { description: 'Deleted' }, 401: error, 403: error, 404: error, 409: error },
      },
    },
    '/admin/routes/{id}/versions': {
      get: { summary: 'Every version of a route, oldest first', parameters: [idParameter], responses: { 200: { description: 'The versions', ...json(list('StoredRoute')) }, 401: error, 403: error, 404: error } },
    },
    ...routingAdminPaths,
    ...mcpAdminPaths,
    ...teamAdminPaths,
    ...quotaAdminPaths,
    '/admin/cache': {
      delete: {
        summary: 'Empty the response cache: a shared namespace, one key’s own namespace, or all of it (semantic indexes included)',
        description: 'Give exactly one of namespace, key or all=true. A key’s own namespace holds what it stored outside shared namespaces; a shared namespace is the one a route names.',
        parameters: [
          { name: 'namespace', in: 'query', required: false, schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' }, description: 'A namespace a route’s cache names' },
          { name: 'key', in: 'query', required: false, schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' }, description: 'A virtual key id, or `account` for the account key' },
          { name: 'all', in: 'query', required: false, schema: { const: 'true' } },
        ],
        responses: {
          200: {
            description: 'Emptied',
            ...json({
              type: 'object',
              required: ['deleted', 'namespace'],
              properties: { deleted: { type: 'integer', minimum: 0, description: 'Answers deleted' }, namespace: { type: ['string', 'null'], description: 'shared:<name>, key:<id>, account, or null for all' } },
            }),
          },
          400: error,
          401: error,
          403: error,
        },
      },
    },
    ...usageAdminPaths,
    '/admin/models': {
      get: { summary: 'List model aliases', responses: { 200: { description: 'The aliases', ...json(list('ModelAlias')) }, 401: error, 403: error } },
    },
    '/admin/models/catalogue': {
      get: {
        summary: "The whole model catalogue, provider by provider (each registered provider under the catalogue's id for it), with its sources and versions",
        responses: {
          200: {
            description: 'The catalogue',
            ...json({
              type: 'object',
              properties: {
                object: { const: 'model_catalogue' },
                source: { type: 'object', properties: { models: { type: 'string' }, prices: { type: 'string' } } },
                providers: {
                  type: 'array',
                  items: { type: 'object', properties: { id: { type: 'string' }, catalogue_provider: { type: 'string' }, models: { type: 'array', items: { type: 'object', description: 'An entry as `GET /v1/models` gives it (`CatalogueModel` in the gateway\'s OpenAPI document).' } } } },
                },
              },
            }),
          },
          401: error,
          403: error,
        },
      },
    },
    '/admin/models/{alias}': {
      put: {
        summary: 'Set a model alias: a request with this `model` takes the route',
        parameters: [aliasParameter],
        requestBody: { required: true, ...json(ref('ModelAliasInput')) },
        responses: { 200: { description: 'Set', ...json(ref('ModelAlias')) }, 400: error, 401: error, 403: error },
      },
      delete: { summary: 'Remove a model alias', parameters: [aliasParameter], responses: { 204: { description: 'Removed' }, 401: error, 403: error, 404: error } },
    },
    ...logsOpenApiPaths,
    ...auditOpenApiPaths,
    ...limitsOpenApiPaths,
  },
  components: {
    securitySchemes: { accountKey: { type: 'apiKey', in: 'header', name: 'x-gateway-api-key' } },
    responses: {
      Error: {
        description: 'An error',
        ...json({
          type: 'object',
          properties: {
            error: {
              type: 'object',
              required: ['message', 'type', 'param', 'code'],
              properties: { message: { type: 'string' }, type: { type: 'string' }, param: { type: ['string', 'null'] }, code: { type: ['string', 'null'] } },
            },
          },
        }),
      },
    },
    schemas: {
      ...routeComponents,
      ...routingAdminSchemas,
      ...mcpAdminSchemas,
      ...teamAdminSchemas,
      ...quotaAdminSchemas,
      ...logsOpenApiSchemas,
      ...auditOpenApiSchemas,
      ...limitsOpenApiSchemas,
      RouteInput: {
        type: 'object',
        additionalProperties: false,
        required: ['route'],
        properties: { name: { type: ['string', 'null'], minLength: 1, maxLength: 128, description: 'Unique; not starting with route_' }, route: ref('Route') },
      },
      StoredRoute: {
        type: 'object',
        properties: {
          id: { type: 'string', description: 'route_…' },
          name: { type: 'string' },
          version: { type: 'integer', minimum: 1 },
          route: ref('Route'),
          updated_at: { type: 'string', format: 'date-time' },
        },
      },
      ModelAliasInput: {
        type: 'object',
        additionalProperties: false,
        description: 'Exactly one of route (inline) and route_id (a stored route id or name, kept by id).',
        properties: { route: ref('Route'), route_id: { type: 'string' } },
      },
      ModelAlias: {
        type: 'object',
        properties: { alias: { type: 'string' }, route: ref('Route'), route_id: { type: 'string' }, updated_at: { type: 'string', format: 'date-time' } },
      },
      CredentialInput: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        description: 'Give api_key, fields, or both. Fields named like a gateway header (x-gateway-…) supply that header for requests made with a virtual key.',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 128 },
          provider: { type: 'string', description: 'Registered provider id (informative)' },
          api_key: { type: 'string', writeOnly: true },
          fields: { type: 'object', additionalProperties: { type: 'string' }, writeOnly: true },
          quota: ref('ProviderQuota'),
        },
      },
      Credential: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          provider: { type: 'string' },
          has_api_key: { type: 'boolean' },
          field_names: { type: 'array', items: { type: 'string' } },
          owner_key_id: { type: 'string', description: 'Set when created from a virtual key’s provider_key' },
          created_at: { type: 'string', format: 'date-time' },
          rotated_at: { type: 'string', format: 'date-time', description: 'When the secret was last replaced' },
          quota: ref('ProviderQuota'),
        },
      },
      CredentialWithUsers: {
        allOf: [
          ref('Credential'),
          {
            type: 'object',
            properties: {
              used_by: {
                type: 'array',
                description: 'The virtual keys using it (deleting it is refused with 409 while any does)',
                items: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } },
              },
              used_by_routes: {
                type: 'array',
                description: 'The stored routes and model aliases whose targets name it (`route fast`, `model alias cheap`); deleting it is refused with 409 while any does',
                items: { type: 'string' },
              },
            },
          },
        ],
      },
      CredentialSecret: {
        type: 'object',
        additionalProperties: false,
        description: 'The new secret: api_key, fields, or both (replaces the old one whole).',
        properties: { api_key: { type: 'string', writeOnly: true }, fields: { type: 'object', additionalProperties: { type: 'string' }, writeOnly: true } },
      },
      BudgetAlert: {
        type: 'object',
        properties: {
          type: { const: 'budget.threshold' },
          key_id: { type: 'string' },
          key_name: { type: 'string' },
          threshold: { enum: [80, 100], description: 'Percent of the budget reached' },
          budget_usd: { type: 'number' },
          spent_usd: { type: 'number', description: 'Spend in the period when the threshold was crossed' },
          period: { enum: ['total', 'day', 'month'] },
          period_id: { type: 'string', description: '`total`, a UTC day (2025-01-31) or a UTC month (2025-01)' },
          resets_at: { type: ['string', 'null'], format: 'date-time', description: 'When the period’s spend starts again (null for total)' },
          at: { type: 'string', format: 'date-time' },
        },
      },
      Limits: {
        description: 'A virtual key’s limits: a level’s (docs/limits.md#levels), rules for its end users and tags, and the users and models it may name',
        allOf: [
          { $ref: '#/components/schemas/TeamLimits' },
          {
            type: 'object',
            properties: {
              allowed_users: { type: 'array', items: { type: 'string' }, description: 'Matched against the request body’s user' },
              allowed_models: { type: 'array', items: { type: 'string' } },
            },
          },
        ],
      },
      AllowedRoutes: {
        type: 'array',
        maxItems: 100,
        items: { type: 'string', minLength: 1, maxLength: 256 },
        description:
          'Other routes the key may name in x-gateway-config: stored route ids or names (kept by id), or names of routes in the configuration (kept by name). An unknown one is 400 with param allowed_routes[i]. Without a grant, a key takes only its own route and model aliases; naming any other route is 403 route_not_allowed.',
      },
      VirtualKeyInput: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        description: 'Exactly one of provider (with exactly one of credential_id and provider_key) and route; or neither, with an mcp grant (an MCP-only key).',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 128, description: 'Unique' },
          provider: { type: 'string', description: 'Registered provider id' },
          route: { type: 'string', description: 'A stored route id or name (kept by id): the key takes that route instead of one provider' },
          allowed_routes: ref('AllowedRoutes'),
          credential_id: { type: 'string' },
          provider_key: { type: 'string', writeOnly: true, description: 'Sealed into a credential owned by this key' },
          custom_host: { type: 'string', format: 'uri', description: 'Base URL of a privately hosted endpoint' },
          guardrail_policy: { type: 'string' },
          mcp: ref('McpGrant'),
          limits: ref('Limits'),
          expires_at: { type: 'string', format: 'date-time' },
          log_bodies: { type: 'boolean', default: true, description: 'False keeps this key’s request and response bodies out of the request log (the global switch still wins when off)' },
          priority: { enum: ['interactive', 'batch'], default: 'interactive', description: 'Its requests’ class in a provider quota’s queue: interactive ones leave it first (a request may lower itself with x-gateway-priority: batch)' },
        },
      },
      VirtualKeyPatch: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        properties: {
          name: { type: 'string' },
          provider: { type: 'string' },
          credential_id: { type: 'string' },
          provider_key: { type: 'string', writeOnly: true },
          route: { type: 'string', description: 'Only on a key that names a route' },
          allowed_routes: { oneOf: [ref('AllowedRoutes'), { type: 'null' }], description: 'Replaced whole; null removes every grant' },
          custom_host: { type: ['string', 'null'] },
          guardrail_policy: { type: ['string', 'null'] },
          mcp: { oneOf: [ref('McpGrant'), { type: 'null' }], description: 'Replaced whole; null removes the grant (the key then gets 403 mcp_not_granted at initialize)' },
          limits: { oneOf: [ref('Limits'), { type: 'null' }] },
          expires_at: { type: ['string', 'null'], format: 'date-time' },
          log_bodies: { type: 'boolean' },
          priority: { enum: ['interactive', 'batch', null] },
        },
      },
      VirtualKey: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          provider: { type: 'string' },
          credential_id: { type: 'string' },
          route: { type: 'string', description: 'The stored route id of a key that names a route (then no provider nor credential_id)' },
          allowed_routes: { type: 'array', items: { type: 'string' }, description: 'The routes granted to the key, as stored: stored routes by id (route_…), config routes by name' },
          custom_host: { type: 'string' },
          guardrail_policy: { type: 'string' },
          mcp: ref('McpGrant'),
          limits: ref('Limits'),
          expires_at: { type: 'string', format: 'date-time' },
          log_bodies: { type: 'boolean', description: 'Whether the request log stores this key’s bodies (true unless set false)' },
          priority: { enum: ['interactive', 'batch'], description: 'Absent: interactive' },
          created_at: { type: 'string', format: 'date-time' },
          updated_at: { type: 'string', format: 'date-time' },
          key_hint: { type: 'string', description: 'Masked: prefix and last 4 characters' },
        },
      },
      VirtualKeyWithValue: {
        allOf: [ref('VirtualKey'), { type: 'object', required: ['key'], properties: { key: { type: 'string', description: 'The value, shown once' } } }],
      },
      ...usageAdminSchemas,
      Usage: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          spend_usd: { type: 'object', properties: { total: { type: 'number' }, day: { type: 'number' }, month: { type: 'number' } } },
          reserved_usd: { type: 'number', description: 'Held by requests in flight' },
          requests: {
            type: 'object',
            properties: { total: { type: 'integer' }, day: { type: 'integer', description: 'This UTC day' }, minute: { type: ['integer', 'null'], description: 'The last 60 seconds (null without requests_per_minute: not counted)' } },
          },
          budget_usd: { type: ['number', 'null'] },
          budget_period: { type: ['string', 'null'] },
          remaining_usd: { type: ['number', 'null'] },
          budget_used: { type: ['number', 'null'], description: 'Spend in the budget’s period over the budget (1 = all of it; may pass 1)' },
          budget_exhausted: {
            type: ['boolean', 'null'],
            description: 'The gateway refuses the key for its budget: spend in the period reached the budget, or what is left (less in-flight reservations) is less than refused_estimate_usd',
          },
          refused_estimate_usd: { type: ['number', 'null'], description: 'The smallest estimate of a request refused for the budget in this period at this budget (null: none refused)' },
          budget_resets_at: { type: ['string', 'null'], format: 'date-time', description: 'When a day or month budget starts again' },
          requests_per_minute: { type: ['integer', 'null'] },
          requests_per_day: { type: ['integer', 'null'] },
          remaining_requests_this_minute: { type: ['integer', 'null'] },
          remaining_requests_today: { type: ['integer', 'null'] },
          day_resets_at: { type: 'string', format: 'date-time', description: 'When the daily request count starts again (UTC midnight)' },
          alerts: {
            type: 'array',
            description: 'Budget alerts of the current period',
            items: { type: 'object', properties: { threshold: { enum: [80, 100] }, at: { type: 'string', format: 'date-time' }, spent_usd: { type: 'number' } } },
          },
        },
      },
    },
  },
} as const;
