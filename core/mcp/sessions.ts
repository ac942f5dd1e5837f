import { randomBytes } from 'node:crypto';
import type { SharedState } from '../store/state.js';

/** A client's MCP session with the gateway, kept in the shared state so that any instance serves any of its requests. */
export interface McpSession {
  readonly id: string;
  /** The virtual key that opened it: another key's request naming it gets 404, as an unknown session. */
  readonly keyId: string;
  /** `/mcp/<server>`'s server, or undefined for the aggregating `/mcp`. */
  readonly server?: string;
  readonly protocolVersion: string;
  readonly clientName?: string;
  readonly created_at: string;
}

const sessionKey = (id: string) => `mcpsession:${id}`;

/** How long a session lives without being used (it is extended as it is used, at most once a minute). */
export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Sessions in the shared state (Redis across instances): a session is a small record (its key,
 * scope and protocol version); the upstream sessions are each instance's own pooled connections,
 * so nothing else of a session needs to move between instances.
 */
export class McpSessions {
  private readonly touched = new Map<string, number>();

  constructor(private readonly state: () => SharedState) {}

  async open(session: Omit<McpSession, 'id' | 'created_at'>): Promise<McpSession> {
    const record: McpSession = { ...session, id: randomBytes(24).toString('base64url'), created_at: new Date().toISOString() };
    await this.state().records.set(sessionKey(record.id), record, SESSION_TTL_MS);
    return record;
  }

  /** The session of this id when `keyId` opened it; undefined otherwise (unknown, expired, ended or another key's). */
  async find(id: string, keyId: string): Promise<McpSession | undefined> {
    if (id.length > 200) return undefined;
    const record = (await this.state().records.get<McpSession>(sessionKey(id))) ?? undefined;
    if (record === undefined || record.keyId !== keyId) return undefined;
    const now = Date.now();
    if ((this.touched.get(id) ?? 0) + 60_000 < now) {
      if (this.touched.size > 10_000) this.touched.clear();
      this.touched.set(id, now);
      await this.state().records.set(sessionKey(id), record, SESSION_TTL_MS);
    }
    return record;
  }

  async end(id: string): Promise<void> {
    this.touched.delete(id);
    await this.state().records.delete(sessionKey(id));
  }
}
