import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpCatalogue, UpstreamServer } from './catalogue.js';
import { RPC } from './sdk.js';
import { mayReachServer } from './grants.js';
import { JsonRpcError, type MethodOutcome, type McpScope, NAME_SEPARATOR } from './methods.js';
import { UpstreamMcpError } from './upstream.js';

/**
 * Resources, resource templates, prompts and completion, aggregated like tools: a server the
 * caller's grant reaches (an entry for it, or `*`) shows them all. On `/mcp`, a prompt is named
 * `<server>__<prompt>` and a resource URI (or URI template) is `mcp://<server>/<its own URI>`
 * (server names hold no `/`, so the first `/` after the name splits it back); on `/mcp/<server>`
 * they keep their own. Upstream pages are gathered: the gateway answers in one page.
 */

const URI_PREFIX = 'mcp://';

/** The namespaced form of an upstream URI on `/mcp`. */
export const namespacedUri = (server: string, uri: string) => `${URI_PREFIX}${server}/${uri}`;

/** The server and upstream URI a namespaced URI stands for, or undefined when it is not one. */
export function splitUri(uri: string): { server: string; uri: string } | undefined {
  if (!uri.startsWith(URI_PREFIX)) return undefined;
  const at = uri.indexOf('/', URI_PREFIX.length);
  if (at <= URI_PREFIX.length) return undefined;
  return { server: uri.slice(URI_PREFIX.length, at), uri: uri.slice(at + 1) };
}

type Capability = 'resources' | 'prompts' | 'completions';

/** The servers of the scope that the caller reaches and that are up. */
async function reachable(catalogue: McpCatalogue, scope: McpScope): Promise<UpstreamServer[]> {
  const servers = await catalogue.servers();
  const chosen = scope.server === undefined ? [...servers.values()] : [servers.get(scope.server)].filter((server): server is UpstreamServer => server !== undefined);
  return chosen.filter((server) => server.status === 'ok' && mayReachServer(scope.principal, server.name));
}

/** Gathers a list from every reachable server with the capability (a server that fails is left out of the list). */
async function gather<T>(catalogue: McpCatalogue, scope: McpScope, capability: Capability, list: (client: Client, server: UpstreamServer) => Promise<T[]>): Promise<T[]> {
  const lists = await Promise.all(
    (await reachable(catalogue, scope)).map((server) =>
      server.connection.with(async (client, capabilities) => (capabilities[capability] === undefined ? [] : list(client, server))).catch(() => [] as T[]),
    ),
  );
  return lists.flat();
}

/** Every page of a paginated upstream list. */
async function allPages<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let count = 0; count < 100; count++) {
    const answer = await page(cursor);
    items.push(...answer.items);
    cursor = answer.nextCursor;
    if (cursor === undefined) break;
  }
  return items;
}

const cursorOf = (cursor: string | undefined) => (cursor === undefined ? {} : { cursor });

export async function listResources(catalogue: McpCatalogue, scope: McpScope): Promise<MethodOutcome> {
  const resources = await gather(catalogue, scope, 'resources', async (client, server) => {
    const listed = await allPages(async (cursor) => {
      const answer = await client.listResources(cursorOf(cursor), server.connection.requestOptions);
      return { items: answer.resources, ...(answer.nextCursor !== undefined ? { nextCursor: answer.nextCursor } : {}) };
    });
    return scope.server === undefined ? listed.map((resource) => ({ ...resource, uri: namespacedUri(server.name, resource.uri), name: `${server.name}${NAME_SEPARATOR}${resource.name}` })) : listed;
  });
  return { result: { resources } };
}

export async function listResourceTemplates(catalogue: McpCatalogue, scope: McpScope): Promise<MethodOutcome> {
  const resourceTemplates = await gather(catalogue, scope, 'resources', async (client, server) => {
    const listed = await allPages(async (cursor) => {
      const answer = await client.listResourceTemplates(cursorOf(cursor), server.connection.requestOptions);
      return { items: answer.resourceTemplates, ...(answer.nextCursor !== undefined ? { nextCursor: answer.nextCursor } : {}) };
    });
    return scope.server === undefined ? listed.map((template) => ({ ...template, uriTemplate: namespacedUri(server.name, template.uriTemplate), name: `${server.name}${NAME_SEPARATOR}${template.name}` })) : listed;
  });
  return { result: { resourceTemplates } };
}

export async function listPrompts(catalogue: McpCatalogue, scope: McpScope): Promise<MethodOutcome> {
  const prompts = await gather(catalogue, scope, 'prompts', async (client, server) => {
    const listed = await allPages(async (cursor) => {
      const answer = await client.listPrompts(cursorOf(cursor), server.connection.requestOptions);
      return { items: answer.prompts, ...(answer.nextCursor !== undefined ? { nextCursor: answer.nextCursor } : {}) };
    });
    return scope.server === undefined ? listed.map((prompt) => ({ ...prompt, name: `${server.name}${NAME_SEPARATOR}${prompt.name}` })) : listed;
  });
  return { result: { prompts } };
}

/** The server a name (`<server>__<name>` on `/mcp`) or a URI (`mcp://<server>/…`) means, with its own name or URI; -32602 when none the caller reaches. */
async function target(catalogue: McpCatalogue, scope: McpScope, value: string, kind: 'name' | 'uri'): Promise<{ server: UpstreamServer; own: string }> {
  let serverName = scope.server;
  let own = value;
  if (serverName === undefined) {
    const split = kind === 'uri' ? splitUri(value) : undefined;
    const at = kind === 'name' ? value.indexOf(NAME_SEPARATOR) : -1;
    if (split) ({ server: serverName, uri: own } = split);
    else if (at > 0) [serverName, own] = [value.slice(0, at), value.slice(at + NAME_SEPARATOR.length)];
  }
  const server = serverName === undefined ? undefined : (await reachable(catalogue, scope)).find((candidate) => candidate.name === serverName);
  if (server === undefined) throw new JsonRpcError(RPC.InvalidParams, kind === 'uri' ? `Resource not found: ${value.slice(0, 200)}` : `Unknown prompt: ${value.slice(0, 200)}`);
  return { server, own };
}

/** Runs an upstream request, its failure a JSON-RPC error naming the server. */
async function upstream<T>(server: UpstreamServer, call: (client: Client) => Promise<T>): Promise<T> {
  try {
    return await server.connection.with((client) => call(client));
  } catch (error) {
    if (error instanceof UpstreamMcpError) throw new JsonRpcError(error.code, error.message);
    throw error;
  }
}

export async function readResource(catalogue: McpCatalogue, scope: McpScope, params: Record<string, unknown>): Promise<MethodOutcome> {
  if (typeof params.uri !== 'string') throw new JsonRpcError(RPC.InvalidParams, 'resources/read needs params.uri, a string.');
  const { server, own } = await target(catalogue, scope, params.uri, 'uri');
  const answer = await upstream(server, (client) => client.readResource({ uri: own }, server.connection.requestOptions));
  const contents = scope.server === undefined ? answer.contents.map((content) => ({ ...content, uri: namespacedUri(server.name, content.uri) })) : answer.contents;
  return { result: { ...answer, contents }, server: server.name };
}

export async function getPrompt(catalogue: McpCatalogue, scope: McpScope, params: Record<string, unknown>): Promise<MethodOutcome> {
  if (typeof params.name !== 'string') throw new JsonRpcError(RPC.InvalidParams, 'prompts/get needs params.name, a string.');
  const { server, own } = await target(catalogue, scope, params.name, 'name');
  const args = params.arguments as Record<string, string> | undefined;
  const answer = await upstream(server, (client) => client.getPrompt({ name: own, ...(args !== undefined ? { arguments: args } : {}) }, server.connection.requestOptions));
  return { result: answer, server: server.name };
}

/** `completion/complete` for a prompt's or a resource template's argument, sent to the server that owns it. */
export async function complete(catalogue: McpCatalogue, scope: McpScope, params: Record<string, unknown>): Promise<MethodOutcome> {
  const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
  const argument = params.argument as { name: string; value: string } | undefined;
  if (typeof argument?.name !== 'string' || typeof argument.value !== 'string') throw new JsonRpcError(RPC.InvalidParams, 'completion/complete needs params.argument { name, value }.');
  const isPrompt = ref?.type === 'ref/prompt' && typeof ref.name === 'string';
  const isResource = ref?.type === 'ref/resource' && typeof ref.uri === 'string';
  if (!isPrompt && !isResource) throw new JsonRpcError(RPC.InvalidParams, 'completion/complete needs params.ref, a ref/prompt with a name or a ref/resource with a uri.');
  const { server, own } = await target(catalogue, scope, (isPrompt ? ref!.name : ref!.uri) as string, isPrompt ? 'name' : 'uri');
  const upstreamRef = isPrompt ? { type: 'ref/prompt' as const, name: own } : { type: 'ref/resource' as const, uri: own };
  const context = params.context as { arguments?: Record<string, string> } | undefined;
  const answer = await upstream(server, (client) => client.complete({ ref: upstreamRef, argument, ...(context ? { context } : {}) }, server.connection.requestOptions));
  return { result: answer, server: server.name };
}
