import type { VaultService } from './service.js';

/** How long the state store may take to answer the readiness read. */
const READ_TIMEOUT_MS = 2_000;
/** The key read (it need not exist: any answer proves the store answers). */
const PROBE_KEY = 'readiness:probe';

/** What `GET /ready` answers. */
export interface ReadinessAnswer {
  readonly status: 200 | 503;
  readonly body: { readonly status: 'ready' | 'starting' | 'draining' | 'store_unavailable'; readonly store: 'embedded' | 'redis' | null };
}

/**
 * Readiness (`GET /ready`, Kubernetes' readiness probe): ready once the vault is open and its state
 * store (Redis with `REDIS_URL`, else the data dir's SQLite; with GATEWAY_WORKERS, the primary's
 * counters over IPC) answers a read within 2 s; not ready while the gateway drains (`close`). The
 * request log's store is not read: its queue spills to disk while PostgreSQL is away, so the
 * gateway serves on. Liveness stays `GET /health`, which reads nothing.
 */
export class Readiness {
  private draining = false;

  constructor(private readonly vault: VaultService) {}

  /** From now on, not ready: the gateway stops accepting (SIGTERM). */
  drain(): void {
    this.draining = true;
  }

  async check(): Promise<ReadinessAnswer> {
    if (this.draining) return { status: 503, body: { status: 'draining', store: null } };
    if (!this.vault.isStarted) return { status: 503, body: { status: 'starting', store: null } };
    const state = this.vault.parts.state;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        state.read([PROBE_KEY]),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out')), READ_TIMEOUT_MS);
        }),
      ]);
      return { status: 200, body: { status: 'ready', store: state.kind } };
    } catch {
      return { status: 503, body: { status: 'store_unavailable', store: state.kind } };
    } finally {
      clearTimeout(timer);
    }
  }
}
