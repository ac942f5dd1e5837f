import type { AxiosResponse } from 'axios';
import { type ControlPlaneHttp, type PluginDependencies, SinkError, type StoredCredential } from '../../core/spec/index.js';

// What the log sink plugins share: a secret given as such (read from the environment in
// gateway.config.ts) or the id of a credential stored in the vault, opened when a connection or a
// delivery needs it; errors worded without secrets; an HTTP POST through the control-plane client.

/** JSON Schema of the vault credential id a sink may take instead of its secret. */
export const CREDENTIAL_PROPERTY = { type: 'string', minLength: 1, maxLength: 128 } as const;

/** The delivery deadline of one HTTP call (the queue's own `timeoutMs` bounds the whole delivery). */
export const HTTP_TIMEOUT_MS = 10_000;

/**
 * The secret: the stored credential named by `credential`, opened per call (a rotation applies
 * from the next delivery), else what `given` holds. Its error never carries the secret.
 */
export function secretOf(sink: string, given: StoredCredential | undefined, credential: string | undefined, dependencies: PluginDependencies): () => Promise<StoredCredential | undefined> {
  if (credential === undefined) return async () => given;
  return async () => {
    try {
      return await dependencies.credential(credential);
    } catch {
      throw new SinkError(sink, `the stored credential "${credential}" cannot be read`);
    }
  };
}

/** A client library's error reduced to its code and message (the libraries used here do not echo passwords). */
export function sinkFailure(sink: string, error: unknown): SinkError {
  if (error instanceof SinkError) return error;
  const code = (error as { code?: unknown })?.code;
  const message = (error as Error)?.message || String(error);
  return new SinkError(sink, typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message);
}

/** POSTs a body; rejects on anything but 2xx with the status only (an axios error carries the request's headers, so only its code is kept). */
export async function postBody(http: ControlPlaneHttp, sink: string, url: string, body: string | Buffer, headers: Record<string, string>, timeoutMs = HTTP_TIMEOUT_MS): Promise<AxiosResponse<string>> {
  let response: AxiosResponse<string>;
  try {
    response = await http.post<string>(url, body, {
      timeout: timeoutMs,
      maxRedirects: 0,
      responseType: 'text',
      transformResponse: [(data) => data],
      validateStatus: () => true,
      headers,
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new SinkError(sink, `request failed${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  if (response.status < 200 || response.status > 299) throw new SinkError(sink, `answered HTTP ${response.status}`, response.status);
  return response;
}

/**
 * Splits serialised items into groups of at most `maxCount` items whose bytes (plus `overhead`
 * per item) stay under `maxBytes` (an intake's payload cap); an item larger than the cap alone
 * makes a group of its own.
 */
export function groupsUnder(items: readonly string[], maxBytes: number, maxCount: number, overhead = 1): string[][] {
  const groups: string[][] = [];
  let group: string[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = Buffer.byteLength(item) + overhead;
    if (group.length > 0 && (bytes + size > maxBytes || group.length >= maxCount)) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(item);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
