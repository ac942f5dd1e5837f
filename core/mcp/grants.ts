import type { McpGrant, McpServerGrant } from '../vault/records.js';

/**
 * Who asks for MCP tools: the grants they hold, the key's own and its team's (either may be absent).
 * The effective grant is their union, less what any of them denies (see {@link mayUseTool}).
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
 * (`tools/list`) and calling (`tools/call`) both ask this, on every endpoint and for the Responses
 * API's `mcp` tool, so a tool is listed exactly when it is callable. A tool must pass the server's
 * own `allowed_tools`; then, over the principal's grants (a key's and its team's), the entry of each
 * that applies to the server (its own, else `*`): one entry's `tools` globs must match it, and no
 * entry's `deny` globs may (a deny of either the key or the team wins over an allow of the other).
 */
export function mayUseTool(principal: McpPrincipal, server: GrantedServer, tool: string): boolean {
  if (server.allowed_tools !== undefined && !matchesAny(server.allowed_tools, tool)) return false;
  let allowed = false;
  for (const grant of principal.grants) {
    const entry = entryFor(grant, server.name);
    if (entry === undefined) continue;
    if (entry.deny !== undefined && matchesAny(entry.deny, tool)) return false;
    if (!allowed && matchesAny(entry.tools, tool)) allowed = true;
  }
  return allowed;
}

/** May `principal` reach `server` at all (an entry applies to it)? A server reached may still list no tool. */
export function mayReachServer(principal: McpPrincipal, server: string): boolean {
  return principal.grants.some((grant) => entryFor(grant, server) !== undefined);
}

/** The principal of a virtual key (with its team's grant), or undefined when neither holds an MCP grant (403 `mcp_not_granted`). */
export function principalOf(record: { readonly mcp?: McpGrant }, team?: { readonly mcp?: McpGrant }): McpPrincipal | undefined {
  const grants = [record.mcp, team?.mcp].filter((grant): grant is McpGrant => grant !== undefined);
  return grants.length === 0 ? undefined : { grants };
}
