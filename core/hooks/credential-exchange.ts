import { createHash } from 'node:crypto';
import { errors, GatewayError } from '../errors.js';
import { readChunks } from '../http/body.js';
import type { UpstreamClient } from '../http/upstream.js';
import { OAuthTokenSource } from '../mcp/oauth.js';
import type { AuthSlice } from '../pipeline/context.js';
import type { ProviderPlugin, UpstreamRequest } from '../spec/provider.js';
import type { CredentialExchange } from '../spec/credential-exchange.js';

/** Most credentials whose tokens are kept; past it the oldest is dropped (asked for again when next used). */
const MAX_CREDENTIALS = 10_000;
/** Most bytes of a token endpoint's answer read. */
const ANSWER_LIMIT = 256 * 1024;
/** An abort signal that never fires: an exchange serves every request waiting on it, not the one that started it. */
const NEVER = new AbortController().signal;

/** The auth with `token` as its credentials' exchanged token. */
const withToken = (auth: AuthSlice, token: string): AuthSlice => ({ ...auth, target: { ...auth.target, credentials: { ...auth.target.credentials, exchangedToken: token } } });

/**
 * The tokens providers' credential exchanges give (`ProviderPlugin.credentialExchange`), one
 * {@link OAuthTokenSource} per credential: single-flight, refreshed before expiry, dropped after a
 * 401. Keyed by a SHA-256 of the provider and its token request, so no map holds a secret as a key.
 */
export class CredentialExchanges {
  private readonly sources = new Map<string, OAuthTokenSource>();

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly now: () => number,
  ) {}

  /** The auth with its exchanged token; the same auth when its provider exchanges nothing for this credential. */
  async apply(auth: AuthSlice): Promise<AuthSlice> {
    const exchange = auth.provider.credentialExchange;
    if (exchange === undefined || !exchange.applies(auth.target)) return auth;
    return withToken(auth, await this.source(auth, exchange).token());
  }

  /** The upstream refused `auth`'s exchanged token (401): it is forgotten; the auth with a new one, or undefined when `auth` had none. */
  async renew(auth: AuthSlice): Promise<AuthSlice | undefined> {
    const exchange = auth.provider.credentialExchange;
    const token = auth.target.credentials.exchangedToken;
    if (exchange === undefined || token === undefined) return undefined;
    const source = this.source(auth, exchange);
    source.refused(token);
    return withToken(auth, await source.token());
  }

  /** How many credentials have a token source (tests). */
  get size(): number {
    return this.sources.size;
  }

  private source(auth: AuthSlice, exchange: CredentialExchange): OAuthTokenSource {
    const request = exchange.toUpstream(auth.target);
    const guarded = auth.target.customHost;
    const key = requestKey(auth.provider.id, request, guarded);
    let source = this.sources.get(key);
    if (source === undefined) {
      if (this.sources.size >= MAX_CREDENTIALS) this.sources.delete(this.sources.keys().next().value!);
      source = new OAuthTokenSource(() => this.exchange(auth.provider, exchange, request, guarded), this.now);
      this.sources.set(key, source);
    }
    return source;
  }

  /** One token request, sent with the provider's egress policy; its failures described without the secret. */
  private async exchange(provider: ProviderPlugin, exchange: CredentialExchange, request: UpstreamRequest, guarded: boolean): Promise<{ token: string; lifetimeMs?: number }> {
    const failed = (why: string) => errors.badGateway(`The credential exchange of the provider "${provider.id}" failed: ${why}.`, { code: 'credential_exchange_failed' });
    let status: number;
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      const answer = await this.upstream.send(request, { signal: NEVER, guarded });
      status = answer.status;
      await readChunks(answer.body, (chunk) => {
        size += chunk.byteLength;
        if (size > ANSWER_LIMIT) throw failed('the token endpoint answered too many bytes');
        chunks.push(chunk);
      });
    } catch (error) {
      if (error instanceof GatewayError && error.body.code === 'credential_exchange_failed') throw error;
      throw failed(error instanceof GatewayError ? error.body.message : 'the token endpoint could not be reached');
    }
    if (status >= 400 && status < 500) {
      throw errors.authentication(`The credential exchange of the provider "${provider.id}" was refused (HTTP ${status}): check the credential.`, { code: 'credential_exchange_refused' });
    }
    if (status < 200 || status >= 300) throw failed(`the token endpoint answered HTTP ${status}`);
    let exchanged;
    try {
      exchanged = exchange.fromUpstream(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      throw failed('the token endpoint answered without a token');
    }
    if (typeof exchanged.token !== 'string' || exchanged.token === '') throw failed('the token endpoint answered without a token');
    return exchanged.expiresAt === undefined ? { token: exchanged.token } : { token: exchanged.token, lifetimeMs: Math.max(0, exchanged.expiresAt - this.now()) };
  }
}

/** A hash of the provider, its token request (which holds the credential) and the egress policy it is sent with: the key a credential's token is kept under. */
function requestKey(providerId: string, request: UpstreamRequest, guarded: boolean): string {
  const hash = createHash('sha256').update(providerId).update(guarded ? '\0guarded\0' : '\0').update(request.method).update('\0').update(request.url);
  for (const name of Object.keys(request.headers).sort()) hash.update('\0').update(name).update('=').update(request.headers[name]);
  hash.update('\0');
  if (typeof request.body === 'string' || request.body instanceof Uint8Array) hash.update(request.body);
  return hash.digest('base64url');
}
