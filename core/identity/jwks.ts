import type { createLocalJWKSet, JSONWebKeySet, JWTVerifyGetKey } from 'jose';

let joseModule: Promise<typeof import('jose')> | undefined;
/** `jose`, loaded on first use: a gateway that verifies no token never loads it (start-up time). */
export const loadJose = (): Promise<typeof import('jose')> => (joseModule ??= import('jose'));

/** What a {@link JwksCache} reads JSON documents with (discovery documents and key sets). */
export type JsonFetcher = (url: string) => Promise<unknown>;

/** A key set or discovery document is small: anything larger is refused rather than held. */
const MAX_DOCUMENT_BYTES = 256 * 1024;
const FETCH_TIMEOUT_MS = 5000;

/**
 * Reads a JSON document over HTTP(S), size-limited and time-limited, without redirects (an issuer's
 * documents are where its metadata says). Errors name the URL and the status, never a body.
 */
export const fetchJson: JsonFetcher = async (url) => {
  const response = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${url} answered ${response.status}`);
  }
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > MAX_DOCUMENT_BYTES) {
    await response.body?.cancel();
    throw new Error(`${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > MAX_DOCUMENT_BYTES) throw new Error(`${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
};

/** The `jwks_uri` of an issuer's OpenID discovery document, whose `issuer` must be the issuer itself. */
export async function discoverJwksUri(issuer: string, fetcher: JsonFetcher = fetchJson): Promise<string> {
  const document = await fetcher(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);
  const metadata = (typeof document === 'object' && document !== null ? document : {}) as { issuer?: unknown; jwks_uri?: unknown };
  if (metadata.issuer !== issuer) throw new Error(`the discovery document of ${issuer} names another issuer`);
  if (typeof metadata.jwks_uri !== 'string') throw new Error(`the discovery document of ${issuer} has no jwks_uri`);
  return metadata.jwks_uri;
}

/** The key set (or the discovery document naming it) could not be fetched or read. */
export class KeySetUnavailable extends Error {}

export interface JwksCacheOptions {
  /** Milliseconds since the epoch (the gateway's clock). */
  readonly now?: () => number;
  /** Keys are fetched again after this long (default 10 minutes), so a key removed by a rotation stops working. */
  readonly maxAgeMs?: number;
  /** An unknown `kid` refetches the set at most this often (default 30 s), so forged `kid`s cannot hammer the issuer. */
  readonly cooldownMs?: number;
  /** Keys kept from one set (default 32); the rest are ignored. */
  readonly maxKeys?: number;
  readonly fetcher?: JsonFetcher;
}

/**
 * One issuer's signing keys, fetched from its JWK Set and cached: refreshed when older than
 * `maxAgeMs` and, at most once per `cooldownMs`, when a token names a key the cached set lacks (a
 * rotation). A failed refresh keeps the last set in use; attempts are spaced by `cooldownMs` either
 * way, so an unreachable issuer is not asked on every request. Holds one set of at most `maxKeys` keys; concurrent refreshes share one fetch. Its
 * {@link getKey} is the key lookup `jose`'s `jwtVerify` takes.
 */
export class JwksCache {
  private cached?: { readonly lookup: ReturnType<typeof createLocalJWKSet>; readonly fetchedAt: number };
  private lastAttemptAt = Number.NEGATIVE_INFINITY;
  private refreshing?: Promise<void>;
  private readonly now: () => number;
  private readonly maxAgeMs: number;
  private readonly cooldownMs: number;
  private readonly maxKeys: number;
  private readonly fetcher: JsonFetcher;

  /** `locate` says where the set is (a fixed URL, or discovery); it is asked again on every refresh. */
  constructor(
    private readonly locate: () => Promise<string>,
    options: JwksCacheOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
    this.cooldownMs = options.cooldownMs ?? 30_000;
    this.maxKeys = options.maxKeys ?? 32;
    this.fetcher = options.fetcher ?? fetchJson;
  }

  /**
   * The key set in use while it is fresh (younger than its maximum age), else undefined: a
   * verification made with it may be reused until then (JwtIssuers' cache of verified tokens), so a
   * key the issuer retires stops working at the next refresh either way.
   */
  get freshSet(): object | undefined {
    return this.cached !== undefined && this.now() - this.cached.fetchedAt < this.maxAgeMs ? this.cached : undefined;
  }

  /** The verification key for a token's protected header (jose's `JWTVerifyGetKey`). */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const now = this.now();
    if (this.cached === undefined || now - this.cached.fetchedAt >= this.maxAgeMs) {
      if (this.cached !== undefined && now - this.lastAttemptAt < this.cooldownMs) {
        // A refresh failed a moment ago: the last set stays in use until the next attempt.
      } else if (this.cached === undefined && now - this.lastAttemptAt < this.cooldownMs && this.refreshing === undefined) {
        throw new KeySetUnavailable('the JWK Set could not be fetched a moment ago');
      } else {
        try {
          await this.refresh();
        } catch (error) {
          if (this.cached === undefined) throw error;
        }
      }
    }
    try {
      return await this.cached!.lookup(header, token);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY' || this.now() - this.lastAttemptAt < this.cooldownMs) throw error;
      await this.refresh();
      return this.cached!.lookup(header, token);
    }
  };

  private refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async load(): Promise<void> {
    this.lastAttemptAt = this.now();
    let document: unknown;
    try {
      document = await this.fetcher(await this.locate());
    } catch (error) {
      throw new KeySetUnavailable((error as Error)?.message ?? 'the JWK Set could not be fetched', { cause: error });
    }
    const keys = (document as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new KeySetUnavailable('the JWK Set has no keys array');
    const usable = keys.filter((key): key is JSONWebKeySet['keys'][number] => typeof key === 'object' && key !== null && (key as { kty?: unknown }).kty !== 'oct');
    const { createLocalJWKSet } = await loadJose();
    this.cached = { lookup: createLocalJWKSet({ keys: usable.slice(0, this.maxKeys) }), fetchedAt: this.now() };
  }
}
