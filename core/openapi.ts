import { adminOpenApi } from './admin/openapi.js';
import { v1Components, v1Paths } from './api/openapi.js';
import { json } from './api/openapi-requests.js';

/**
 * The one OpenAPI document of the gateway, assembled above both parts it merges: the unified `/v1`
 * API (core/api/openapi.ts) and the admin API (core/admin/openapi.ts), so that neither imports the
 * other (test/lint/layers.test.ts).
 */

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
  '/ready': {
    get: {
      operationId: 'ready',
      summary: 'Readiness (no key): the state store answers and the gateway is not draining',
      description: "Kubernetes' readiness probe (deploy/helm/llm-gateway). 200 once the vault is open and its state store (Redis with REDIS_URL, else the data dir's SQLite) answers a read within 2 s; 503 while starting, when the store does not answer, and from the moment the gateway drains (SIGTERM). The request log's store is not read: its queue spills to disk while PostgreSQL is away.",
      security: [],
      responses: {
        200: { description: 'Ready', ...json({ type: 'object', properties: { status: { const: 'ready' }, store: { enum: ['embedded', 'redis'] } } }) },
        503: { description: 'Not ready', ...json({ type: 'object', properties: { status: { enum: ['starting', 'draining', 'store_unavailable'] }, store: { enum: ['embedded', 'redis', null] } } }) },
      },
    },
  },
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
