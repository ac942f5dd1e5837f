import { createHash, randomUUID } from 'node:crypto';
import type { SharedState } from '../store/state.js';
import type { McpOAuthSettings } from './oauth.js';

/** An upstream MCP server's settings as the admin API takes them (`/admin/mcp-servers`). */
export interface McpServerSettings {
  /** The tool prefix on `/mcp` (`<name>__<tool>`) and the path of `/mcp/<name>`. */
  readonly name: string;
  readonly transport: 'streamable-http' | 'sse';
  readonly url: string;
  /** A stored vault credential's id: its secret goes upstream as `Authorization: Bearer`, or in `credential_header`. */
  readonly credential?: string;
  readonly credential_header?: string;
  /** OAuth 2 client credentials: the access token comes from `token_url` (the client secret is `credential`) and goes upstream as the Bearer token. */
  readonly oauth?: McpOAuthSettings;
  /** Extra headers sent upstream (their values are never shown back: secrets belong in `credential`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Globs of the server's tools anyone may be granted; absent: all. */
  readonly allowed_tools?: readonly string[];
  readonly timeout_ms?: number;
  readonly max_result_bytes?: number;
  readonly guardrail_policy?: string;
  /** Calls a minute one key may make to one tool of this server; absent: no limit. */
  readonly tool_requests_per_minute?: number;
  /** Charged to the calling key's budget for each tool call that reaches this server. */
  readonly cost_per_call_usd?: number;
  /** What a tool that changed since it was approved becomes: withheld (default), or served with its approved definition. */
  readonly on_tool_change?: 'withhold' | 'serve-approved';
}

/** A tool as an admin approved it (on registration, or with the approve route): its hash and its definition. */
export interface ApprovedTool {
  readonly hash: string;
  readonly tool: McpTool;
  readonly approved_at: string;
}

/** The hash of what a tool tells a model: its description and input schema (and title), keys sorted. */
export function toolHash(tool: McpTool): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(canonical) : typeof value === 'object' && value !== null ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])])) : value;
  return createHash('sha256').update(JSON.stringify(canonical({ title: tool.title, description: tool.description, inputSchema: tool.inputSchema }))).digest('hex');
}

/** Approvals of every tool of a catalogue, now. */
export function approvalsOf(tools: readonly McpTool[]): Record<string, ApprovedTool> {
  const now = new Date().toISOString();
  return Object.fromEntries(tools.map((tool) => [tool.name, { hash: toolHash(tool), tool, approved_at: now }]));
}

/** A stored server: its settings, id and version (every change is a new version, the old ones kept). */
export interface McpServerRecord extends McpServerSettings {
  readonly id: string;
  readonly version: number;
  readonly created_at: string;
  readonly updated_at: string;
}

/** One upstream tool as `tools/list` gave it (name, description, schemas, annotations). */
export interface McpTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly [field: string]: unknown;
}

/** What the gateway last learnt of a server's tools: the probe's result. */
export interface McpToolCatalogue {
  readonly status: 'ok' | 'unreachable';
  /** Why the last probe failed (no secrets: the message is redacted). */
  readonly error?: string;
  readonly tools: readonly McpTool[];
  readonly listed_at: string;
}

const SET = 'mcp-servers';
const currentKey = (id: string) => `mcpserver:${id}`;
const versionKey = (id: string, version: number) => `mcpserverver:${id}:${version}`;
const catalogueKey = (id: string) => `mcptools:${id}`;
const approvalsKey = (id: string) => `mcpapproved:${id}`;
const nameClaim = (name: string) => `mcpname:${name}`;
const versionClaim = (id: string, version: number) => `mcpserverver:${id}:${version}`;

/** How long this instance trusts its list of servers without an invalidation event (a guard against a lost one). */
const CACHE_TTL_MS = 30_000;

/** A stored server with what this instance reads beside it: its last catalogue and its approved tools. */
export interface StoredServer {
  readonly record: McpServerRecord;
  readonly catalogue?: McpToolCatalogue;
  readonly approvals: Readonly<Record<string, ApprovedTool>>;
}

/** A tool whose description or schema changed since it was approved: what was approved, what the server lists now. */
export interface HeldTool {
  readonly name: string;
  readonly approved: McpTool;
  readonly current: McpTool;
}

/**
 * The tools a server serves, and those held back: a tool that changed since an admin approved it is
 * withheld (or, with `on_tool_change: "serve-approved"`, served as approved); a tool never approved
 * (added since the registration) is served.
 */
export function servedTools(server: StoredServer): { tools: McpTool[]; held: HeldTool[] } {
  const tools: McpTool[] = [];
  const held: HeldTool[] = [];
  for (const tool of server.catalogue?.tools ?? []) {
    const approved = server.approvals[tool.name];
    if (approved === undefined || approved.hash === toolHash(tool)) tools.push(tool);
    else {
      held.push({ name: tool.name, approved: approved.tool, current: tool });
      if (server.record.on_tool_change === 'serve-approved') tools.push(approved.tool);
    }
  }
  return { tools, held };
}

export class DuplicateMcpServerError extends Error {
  override readonly name = 'DuplicateMcpServerError';
}

/**
 * Upstream MCP servers registered through the admin API, in the shared state (SQLite embedded,
 * Redis shared) like stored routes: versions kept, names unique, and every instance's cache emptied
 * by the `mcp-server` invalidation events, so a change or removal applies everywhere at once.
 */
export class McpServerStore {
  private cached?: { servers: ReadonlyMap<string, StoredServer>; until: number };
  private generation = 0;
  private readonly listeners: Array<(id: string) => void> = [];

  constructor(private readonly state: SharedState) {
    state.subscribe((event) => {
      if (event.kind !== 'mcp-server') return;
      this.generation += 1;
      this.cached = undefined;
      for (const listener of this.listeners) listener(event.id);
    });
  }

  /** Called with a server's id whenever any instance changes it or its tools. */
  onChange(listener: (id: string) => void): void {
    this.listeners.push(listener);
  }

  async create(settings: McpServerSettings, catalogue: McpToolCatalogue): Promise<McpServerRecord> {
    const id = `mcp_${randomUUID().replaceAll('-', '')}`;
    if (!(await this.state.claim(nameClaim(settings.name), id))) throw new DuplicateMcpServerError(`An MCP server named "${settings.name}" exists.`);
    await this.state.claim(versionClaim(id, 1), id);
    const now = new Date().toISOString();
    const record: McpServerRecord = { id, ...settings, version: 1, created_at: now, updated_at: now };
    await this.write(record);
    await this.state.records.set(catalogueKey(id), catalogue);
    await this.state.records.set(approvalsKey(id), approvalsOf(catalogue.tools));
    await this.state.addToSet(SET, id);
    await this.state.publish({ kind: 'mcp-server', id });
    return record;
  }

  async get(id: string): Promise<McpServerRecord | undefined> {
    return (await this.state.records.get<McpServerRecord>(currentKey(id))) ?? undefined;
  }

  async catalogue(id: string): Promise<McpToolCatalogue | undefined> {
    return (await this.state.records.get<McpToolCatalogue>(catalogueKey(id))) ?? undefined;
  }

  async versions(id: string): Promise<McpServerRecord[]> {
    const current = await this.get(id);
    if (!current) return [];
    const all = await Promise.all(Array.from({ length: current.version }, (_, index) => this.state.records.get<McpServerRecord>(versionKey(id, index + 1))));
    return all.filter((record): record is McpServerRecord => record !== undefined && record !== null);
  }

  async list(): Promise<McpServerRecord[]> {
    const records = await Promise.all((await this.state.members(SET)).map((id) => this.get(id)));
    return records.filter((record): record is McpServerRecord => record !== undefined).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Replaces a server's settings (a new version) and its catalogue; undefined when there is no such server. */
  async replace(id: string, settings: McpServerSettings, catalogue: McpToolCatalogue): Promise<McpServerRecord | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const current = await this.get(id);
      if (!current) return undefined;
      if (settings.name !== current.name) {
        if (!(await this.state.claim(nameClaim(settings.name), id))) throw new DuplicateMcpServerError(`An MCP server named "${settings.name}" exists.`);
      }
      const version = current.version + 1;
      if (!(await this.state.claim(versionClaim(id, version), `${id}:${randomUUID()}`))) continue;
      if (settings.name !== current.name) await this.state.release(nameClaim(current.name), id);
      const record: McpServerRecord = { id, ...settings, version, created_at: current.created_at, updated_at: new Date().toISOString() };
      await this.write(record);
      await this.state.records.set(catalogueKey(id), catalogue);
      // A re-registration is an admin's look at the server: its tools as probed now are approved.
      if (catalogue.status === 'ok') await this.state.records.set(approvalsKey(id), approvalsOf(catalogue.tools));
      await this.state.publish({ kind: 'mcp-server', id });
      return record;
    }
    throw new Error(`MCP server ${id}: too many concurrent changes`);
  }

  /** Records a new catalogue (a re-read tool list) without a new version of the settings. */
  async setCatalogue(id: string, catalogue: McpToolCatalogue, changed = true): Promise<void> {
    if (!(await this.get(id))) return;
    await this.state.records.set(catalogueKey(id), catalogue);
    if (changed) await this.state.publish({ kind: 'mcp-server', id });
    // Unchanged: this instance's cache still holds the old time, which would make it re-read again at once.
    else this.cached = undefined;
  }

  /** The approved tools of a server, by name. */
  async approvals(id: string): Promise<Readonly<Record<string, ApprovedTool>>> {
    return (await this.state.records.get<Record<string, ApprovedTool>>(approvalsKey(id))) ?? {};
  }

  /** Approves a tool as the server lists it now; undefined when the server does not list it. */
  async approve(id: string, name: string): Promise<ApprovedTool | undefined> {
    const tool = (await this.catalogue(id))?.tools.find((candidate) => candidate.name === name);
    if (tool === undefined) return undefined;
    const approved: ApprovedTool = { hash: toolHash(tool), tool, approved_at: new Date().toISOString() };
    await this.state.records.set(approvalsKey(id), { ...(await this.approvals(id)), [name]: approved });
    await this.state.publish({ kind: 'mcp-server', id });
    return approved;
  }

  async delete(id: string): Promise<McpServerRecord | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    await this.state.records.delete(currentKey(id));
    await this.state.records.delete(catalogueKey(id));
    await this.state.records.delete(approvalsKey(id));
    for (let version = 1; version <= current.version; version++) await this.state.records.delete(versionKey(id, version));
    await this.state.removeFromSet(SET, id);
    await this.state.release(nameClaim(current.name), id);
    await this.state.publish({ kind: 'mcp-server', id });
    return current;
  }

  /** Every server with its catalogue, by name, cached on this instance until a change anywhere. */
  async servers(): Promise<ReadonlyMap<string, StoredServer>> {
    const now = Date.now();
    if (this.cached && this.cached.until > now) return this.cached.servers;
    const generation = this.generation;
    const records = await this.list();
    const catalogues = await Promise.all(records.map((record) => this.catalogue(record.id)));
    const approvals = await Promise.all(records.map((record) => this.approvals(record.id)));
    const servers = new Map(records.map((record, index) => [record.name, { record, approvals: approvals[index], ...(catalogues[index] ? { catalogue: catalogues[index] } : {}) }]));
    if (generation === this.generation) this.cached = { servers, until: now + CACHE_TTL_MS };
    return servers;
  }

  private async write(record: McpServerRecord): Promise<void> {
    await this.state.records.set(versionKey(record.id, record.version), record);
    await this.state.records.set(currentKey(record.id), record);
  }
}
