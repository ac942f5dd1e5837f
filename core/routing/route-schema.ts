import routeSchemaDocument from './route.schema.json' with { type: 'json' };

/**
 * The published JSON schema (draft 2020-12) of a route, served at `GET /admin/routes/schema` and
 * referenced by the admin OpenAPI document. `parseRoute` is the check the gateway runs; this
 * schema agrees with it except where its description says (core/routing/route-schema.test.ts).
 */
export const routeSchema: Readonly<Record<string, unknown>> = routeSchemaDocument;
