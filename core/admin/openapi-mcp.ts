/**
 * The OpenAPI paths and schemas of the upstream MCP servers (core/admin/mcp-servers.ts) and of a
 * virtual key's MCP grant, spread into the admin API's document (core/admin/openapi.ts).
 */
const error = { $ref: '#/components/responses/Error' };
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const globs = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 256 }, maxItems: 1000 };

export const mcpAdminPaths = {
  '/admin/mcp-servers': {
    post: {
      summary: 'Register an upstream MCP server (streamable HTTP or legacy SSE); it is probed (initialize + tools/list) and its tools recorded',
      description: 'An unreachable server is stored with status `unreachable` and the reason in `status_detail`, not refused. stdio servers are configured in gateway.config.ts only (400 with param `transport`). The URL passes the custom-host policy.',
      requestBody: { required: true, ...json(ref('McpServerInput')) },
      responses: { 201: { description: 'Registered (version 1)', ...json(ref('McpServer')) }, 400: error, 401: error, 403: error, 409: error },
    },
    get: {
      summary: 'List the registered MCP servers, each with its status and tools',
      responses: { 200: { description: 'The servers', ...json({ type: 'object', properties: { object: { const: 'list' }, data: { type: 'array', items: ref('McpServer') } } }) }, 401: error, 403: error },
    },
  },
  '/admin/mcp-servers/{id}': {
    get: { summary: 'One MCP server', parameters: [idParameter], responses: { 200: { description: 'The server', ...json(ref('McpServer')) }, 401: error, 403: error, 404: error } },
    put: {
      summary: 'Replace a server’s settings (the whole body, as for POST): a new version; the server is probed again',
      parameters: [idParameter],
      requestBody: { required: true, ...json(ref('McpServerInput')) },
      responses: { 200: { description: 'The new version', ...json(ref('McpServer')) }, 400: error, 401: error, 403: error, 404: error, 409: error },
    },
    delete: { summary: 'Delete a server and its versions; its tools leave every key’s listing at once, on every instance', parameters: [idParameter], responses: { 204: { description: 'Deleted' }, 401: error, 403: error, 404: error } },
  },
  '/admin/mcp-servers/{id}/tools/{tool}/approve': {
    post: {
      summary: 'Approve a tool as the server lists it now: a tool held back because it changed (a “rug pull”) is served again',
      parameters: [idParameter, { name: 'tool', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        200: { description: 'Approved', ...json({ type: 'object', properties: { object: { const: 'mcp_tool_approval' }, server: { type: 'string' }, tool: { type: 'string' }, hash: { type: 'string' }, approved_at: { type: 'string', format: 'date-time' } } }) },
        401: error,
        403: error,
        404: error,
      },
    },
  },
  '/admin/mcp-servers/{id}/versions': {
    get: {
      summary: 'Every version of a server’s settings, oldest first',
      parameters: [idParameter],
      responses: { 200: { description: 'The versions', ...json({ type: 'object', properties: { object: { const: 'list' }, data: { type: 'array', items: ref('McpServer') } } }) }, 401: error, 403: error, 404: error },
    },
  },
};

const settings = {
  name: { type: 'string', pattern: '^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$', maxLength: 64, description: 'The tool prefix on /mcp (`<name>__<tool>`) and the path of /mcp/<name>; never two underscores in a row' },
  transport: { enum: ['streamable-http', 'sse'] },
  url: { type: 'string', format: 'uri' },
  credential: { type: 'string', description: 'A stored credential’s id (`POST /admin/credentials`): its api_key goes upstream as `Authorization: Bearer <secret>`, or in `credential_header`' },
  credential_header: { type: 'string', description: 'The header that carries the credential’s raw value instead (e.g. `x-api-key`)' },
  oauth: {
    type: 'object',
    additionalProperties: false,
    required: ['token_url', 'client_id'],
    description: 'OAuth 2 client credentials: the gateway gets an access token from `token_url` (client secret: the `credential`’s api_key), keeps it until shortly before it expires, gets a new one after a 401, and sends it as `Authorization: Bearer`',
    properties: {
      token_url: { type: 'string', format: 'uri', description: 'Passes the custom-host policy like `url`' },
      client_id: { type: 'string' },
      scope: { type: 'string' },
      audience: { type: 'string', description: 'Sent as the token request’s `audience`' },
      token_auth: { enum: ['client_secret_basic', 'client_secret_post'], default: 'client_secret_basic' },
    },
  },
  allowed_tools: { ...globs, description: 'Globs (`*`, `?`) of the tools anyone may be granted; absent: all' },
  timeout_ms: { type: 'integer', minimum: 100, maximum: 600000, default: 30000, description: 'Per upstream request; past it the call is a JSON-RPC error naming the server' },
  max_result_bytes: { type: 'integer', minimum: 1, default: 10485760, description: 'A larger tool result is an error, never a partial result' },
  guardrail_policy: { type: 'string', description: 'A configured guardrail policy (checked to exist): it judges tool arguments and results after the key’s policy' },
  tool_requests_per_minute: { type: 'integer', minimum: 1, description: 'Calls a minute one key may make to one tool of this server (shared by every instance); past it a JSON-RPC error -32000' },
  cost_per_call_usd: { type: 'number', minimum: 0, description: 'Charged to the calling key’s budget for each tool call that reaches the server; a key whose budget cannot cover it is refused (-32000)' },
  on_tool_change: { enum: ['withhold', 'serve-approved'], default: 'withhold', description: 'A tool whose description or input schema changed since it was approved is withheld until approved again, or served with its approved definition' },
};
const toolDefinition = { type: 'object', properties: { name: { type: 'string' }, description: { type: 'string' }, inputSchema: { type: 'object' } } };

export const mcpAdminSchemas = {
  McpServerInput: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'transport', 'url'],
    properties: { ...settings, headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Extra headers sent upstream; their values are never shown back (secrets belong in `credential`). On a PUT, a value of `[hidden]` keeps the stored value of that header.' } },
  },
  McpServer: {
    type: 'object',
    properties: {
      object: { const: 'mcp_server' },
      id: { type: 'string' },
      version: { type: 'integer' },
      ...settings,
      headers: { type: 'object', additionalProperties: { const: '[hidden]' } },
      status: { enum: ['ok', 'unreachable'], description: 'What the last probe or tool-list refresh found' },
      status_detail: { type: 'string', description: 'Why the server is unreachable (redacted)' },
      tools: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, description: { type: 'string' } } } },
      tools_listed_at: { type: ['string', 'null'], format: 'date-time' },
      held_tools: { type: 'array', description: 'Tools changed since they were approved (shown as a diff in the dashboard)', items: { type: 'object', properties: { name: { type: 'string' }, approved: toolDefinition, current: toolDefinition } } },
      added_tools: { type: 'array', items: { type: 'string' }, description: 'Tools the server lists that were never approved (added since the registration or the last approval); served, and approvable so that a later change is held' },
      removed_tools: { type: 'array', items: { type: 'string' }, description: 'Approved tools the server no longer lists' },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
    },
  },
  McpGrant: {
    type: 'object',
    additionalProperties: false,
    required: ['servers'],
    description: 'Per server name, or `*` for every server (a named entry wins over `*`): tool globs matched against the tool’s own name, minus `deny` globs. One function decides both tools/list and tools/call (docs/mcp.md).',
    properties: {
      servers: {
        type: 'object',
        additionalProperties: { type: 'object', additionalProperties: false, required: ['tools'], properties: { tools: globs, deny: globs } },
      },
    },
  },
};
