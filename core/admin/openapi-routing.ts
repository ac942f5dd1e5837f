/**
 * The OpenAPI paths and schemas of the routes' breaker state, the configuration's routes and the
 * guardrail policies (core/admin/route-actions.ts, core/admin/policies.ts), spread into the admin
 * API's document (core/admin/openapi.ts).
 */
const error = { $ref: '#/components/responses/Error' };
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const dateTime = { type: 'string', format: 'date-time' };
const maybeDateTime = { type: ['string', 'null'], format: 'date-time' };
const keyRef = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } };

export const routingAdminPaths = {
  '/admin/routes/{id}/state': {
    get: {
      summary: 'The circuit breaker of every target of a stored route, as this instance sees it',
      description:
        'Under the route’s id (requests naming it in x-gateway-config or through a virtual key), and under each model alias naming it (an alias keeps breakers of its own). With REDIS_URL, openings and closings are shared; counts are this instance’s.',
      parameters: [idParameter],
      responses: { 200: { description: 'The breakers', ...json(ref('RouteState')) }, 401: error, 403: error, 404: error },
    },
  },
  '/admin/config-routes': {
    get: {
      summary: 'The routes and model aliases declared in the configuration (read-only), each target with its breaker',
      responses: {
        200: { description: 'The routes', ...json({ type: 'object', properties: { object: { const: 'list' }, data: { type: 'array', items: ref('ConfigRoute') } } }) },
        401: error,
        403: error,
      },
    },
  },
  '/admin/policies': {
    get: {
      summary: 'The configured guardrail policies: each chain’s guardrails and params (write-only params hidden) and the virtual keys using it',
      responses: {
        200: {
          description: 'The policies',
          ...json({ type: 'object', properties: { policies: { type: 'array', items: ref('Policy') }, defaultPolicy: { type: ['string', 'null'] } } }),
        },
        401: error,
        403: error,
      },
    },
  },
  '/admin/policies/verdicts': {
    get: {
      summary: 'Guardrail verdicts of the last hours from the request log, by policy, guardrail, side and action',
      parameters: [{ name: 'hours', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 2160, default: 24 }, description: 'The window, ending now' }],
      responses: { 200: { description: 'The counts', ...json(ref('PolicyVerdicts')) }, 400: error, 401: error, 403: error },
    },
  },
};

const targetState = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'targets[0], targets[0].route.targets[1], …' },
    name: { type: 'string' },
    kind: { enum: ['provider', 'virtual_key', 'route'], description: 'A nested route has no breaker of its own (its targets do)' },
    provider: { type: 'string' },
    tried: { type: 'boolean', description: 'False while this instance has not tried the target' },
    state: { enum: ['closed', 'open', 'half_open'], description: 'half_open: the cooldown has passed; the next attempt is a probe' },
    consecutive_failures: { type: 'integer', minimum: 0 },
    window_requests: { type: 'integer', minimum: 0, description: 'Attempts in the failure-ratio window' },
    window_failures: { type: 'integer', minimum: 0 },
    opened_at: maybeDateTime,
    retry_at: { ...maybeDateTime, description: 'While open: when a probe is let through' },
    in_flight: { type: 'integer', minimum: 0 },
    latency_ms: { type: ['number', 'null'], description: 'Moving average of the latency to response headers' },
    health_check: {
      description: "The target's active health check (its route's health_check) and its last probe; null when it has none. With Redis, one instance probes each target and every instance shows its results",
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          properties: {
            status: { enum: ['unknown', 'healthy', 'unhealthy'], description: 'unhealthy from unhealthy_threshold failed probes in a row (the breaker is held open) until healthy_threshold passed ones (it is closed)' },
            interval_ms: { type: 'integer', minimum: 1000 },
            last_probe_at: maybeDateTime,
            last_status: { type: ['integer', 'null'], description: 'The last upstream status; null when nothing answered' },
            last_latency_ms: { type: ['number', 'null'] },
            last_error: { type: ['string', 'null'], description: 'status_<n>, or the gateway code of a probe with no answer (upstream_timeout, …)' },
            consecutive_failures: { type: 'integer', minimum: 0 },
            consecutive_successes: { type: 'integer', minimum: 0 },
          },
        },
      ],
    },
  },
};

export const routingAdminSchemas = {
  TargetState: targetState,
  RouteState: {
    type: 'object',
    properties: {
      object: { const: 'route_state' },
      id: { type: 'string' },
      name: { type: 'string' },
      version: { type: 'integer' },
      targets: { type: 'array', items: ref('TargetState') },
      aliases: { type: 'array', items: { type: 'object', properties: { alias: { type: 'string' }, targets: { type: 'array', items: ref('TargetState') } } } },
    },
  },
  ConfigRoute: {
    type: 'object',
    properties: {
      kind: { enum: ['route', 'model'], description: 'A named route (routes) or a model alias (models) of gateway.config.ts' },
      name: { type: 'string' },
      route: ref('Route'),
      targets: { type: 'array', items: ref('TargetState') },
    },
  },
  Policy: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      description: { type: 'string' },
      mode: { enum: ['sequential', 'parallel'] },
      revealReasons: { type: 'boolean' },
      passthrough: { enum: ['refuse', 'allow-unjudged'] },
      stream: { type: 'object' },
      input: { type: 'array', items: ref('PolicyStep') },
      output: { type: 'array', items: ref('PolicyStep') },
      default: { type: 'boolean', description: 'The configuration’s defaultPolicy' },
      keys: { type: 'array', items: keyRef, description: 'Virtual keys naming this policy' },
      default_keys: { type: 'array', items: keyRef, description: 'On the default policy: virtual keys naming none (the account key takes it too)' },
    },
  },
  PolicyStep: {
    type: 'object',
    properties: {
      guardrail: { type: 'string', description: 'The guardrail plugin id' },
      params: { description: 'As configured; params the plugin marks writeOnly read "[hidden]"' },
      onError: { enum: ['fail-closed', 'fail-open'] },
      timeoutMs: { type: 'integer' },
      incremental: { type: 'boolean' },
    },
  },
  PolicyVerdicts: {
    type: 'object',
    properties: {
      object: { const: 'policy_verdicts' },
      from: dateTime,
      to: dateTime,
      hours: { type: 'integer' },
      data: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            policy: { type: 'string' },
            requests: { type: 'integer', description: 'Requests the policy judged' },
            denied: { type: 'integer' },
            transformed: { type: 'integer', description: 'Requests or answers a guardrail rewrote (redactions)' },
            verdicts: {
              type: 'array',
              items: { type: 'object', properties: { guardrail: { type: 'string' }, side: { enum: ['input', 'output'] }, action: { enum: ['allow', 'deny', 'transform'] }, count: { type: 'integer' } } },
            },
          },
        },
      },
    },
  },
};
