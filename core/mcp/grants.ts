import type { McpGrant, McpServerGrant } from '../vault/records.js';

/**
 * Who asks for MCP tools: the grants they hold. Today a virtual key's own grant; a team's grant will
 * be added to the list (a tool is usable when any of the holder's grants allows it).
 */
export interface McpPrincipal {
  readonly grants: readonly McpGrant[];
}

/** What a grant decision needs of an upstream server: its name (the grant's key) and its own allow list. */
export interface GrantedServer {
  readonly name: string;
  /** The server's `allowed_tools` globs: a tool outside them is usable by nobody. */
  readonly allowed_tools?: readonly string[];
}

const compiled = new Map<string, RegExp>();

/** A glob (`*` any run of characters, `?` one) as an anchored regular expression; compiled once. */
function globPattern(glob: string): RegExp {
  let pattern = compiled.get(glob);
  if (pattern === undefined) {
    const source = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*').replaceAll('?', '.');
    pattern = new RegExp(`^${source}$`, 's');
    if (compiled.size > 10_000) compiled.clear();
    compiled.set(glob, pattern);
  }
  return pattern;
}

/** True when `name` matches one of the globs. */
export function matchesAny(globs: readonly string[], name: string): boolean {
  for (const glob of globs) if (glob === '*' || glob === name || globPattern(glob).test(name)) return true;
  return false;
}

/** The entry of a grant that applies to a server: its own, else `*`'s (a named entry wins over `*`). */
function entryFor(grant: McpGrant, server: string): McpServerGrant | undefined {
  return Object.hasOwn(grant.servers, server) ? grant.servers[server] : Object.hasOwn(grant.servers, '*') ? grant.servers['*'] : undefined;
}

/**
 * THE decision: may `principal` use `tool` (its own, unprefixed name) of `server`? Listing
 * (`tools/list`) and calling (`tools/call`) both ask this, on every endpoint, so a tool is listed
 * exactly when it is callable. A tool must pass the server's own `allowed_tools`, and one of the
 * principal's grants: the entry for the server (else `*`), its `tools` globs, not its `deny` globs.
 */
export function mayUseTool(principal: McpPrincipal, server: GrantedServer, tool: string): boolean {
  if (server.allowed_tools !== undefined && !matchesAny(server.allowed_tools, tool)) return false;
  for (const grant of principal.grants) {
    const entry = entryFor(grant, server.name);
    if (entry === undefined) continue;
    if (matchesAny(entry.tools, tool) && !(entry.deny !== undefined && matchesAny(entry.deny, tool))) return true;
  }
  return false;
}

/** May `principal` reach `server` at all (an entry applies to it)? A server reached may still list no tool. */
export function mayReachServer(principal: McpPrincipal, server: string): boolean {
  return principal.grants.some((grant) => entryFor(grant, server) !== undefined);
}

/** The principal of a virtual key with an MCP grant, or undefined when it has none (403 `mcp_not_granted`). */
export function principalOf(record: { readonly mcp?: McpGrant }): McpPrincipal | undefined {
  return record.mcp === undefined ? undefined : { grants: [record.mcp] };
}
