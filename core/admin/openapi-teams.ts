/**
 * The OpenAPI paths and schemas of teams (core/admin/org-routes.ts), spread into the admin API's
 * document (core/admin/openapi.ts). A team's `mcp` grant adds to each of its keys' own (docs/mcp.md).
 */
const error = { $ref: '#/components/responses/Error' };
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const names = { type: 'array', items: { type: 'string' } };

const teamFields = {
  name: { type: 'string' },
  description: { type: 'string' },
  metadata: { type: 'object', additionalProperties: { type: 'string' } },
  allowed_providers: { ...names, description: 'Provider ids its keys may be bound to' },
  allowed_models: { ...names, description: 'Models its keys may name (exact, or `prefix*`)' },
  allowed_routes: { ...names, description: 'Stored route ids its keys may take' },
  allowed_credentials: { ...names, description: 'Shared credential ids its keys may use' },
  guardrail_policy: { type: 'string', description: 'The policy its keys get when they name none' },
  mcp: { ...ref('McpGrant'), description: 'MCP servers and tools every key of the team may use besides its own grant: the union of both, less what either denies' },
};

export const teamAdminPaths = {
  '/admin/teams': {
    post: {
      summary: 'Create a team',
      requestBody: { required: true, ...json({ type: 'object', required: ['name'], additionalProperties: false, properties: teamFields }) },
      responses: { 201: { description: 'Created', ...json(ref('Team')) }, 400: error, 401: error, 403: error, 409: error },
    },
    get: { summary: 'List the teams the caller may read', responses: { 200: { description: 'The teams', ...json({ type: 'object', properties: { object: { const: 'list' }, data: { type: 'array', items: ref('Team') } } }) }, 401: error, 403: error } },
  },
  '/admin/teams/{id}': {
    get: { summary: 'One team, with its members', parameters: [idParameter], responses: { 200: { description: 'The team', ...json(ref('Team')) }, 401: error, 403: error, 404: error } },
    patch: {
      summary: 'Change a team: the fields given replace the stored ones; null removes an optional one (`mcp: null` withdraws the team’s grant from its keys within a second)',
      parameters: [idParameter],
      requestBody: { required: true, ...json({ type: 'object', additionalProperties: false, properties: teamFields }) },
      responses: { 200: { description: 'The team', ...json(ref('Team')) }, 400: error, 401: error, 403: error, 404: error, 409: error },
    },
    delete: { summary: 'Delete a team that owns nothing (not `default`)', parameters: [idParameter], responses: { 204: { description: 'Deleted' }, 401: error, 403: error, 404: error, 409: error } },
  },
};

export const teamAdminSchemas = {
  Team: {
    type: 'object',
    properties: { id: { type: 'string' }, ...teamFields, created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' }, members: { type: 'array', items: { type: 'object' } } },
  },
};
