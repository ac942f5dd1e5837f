import type { AxiosResponse } from 'axios';
import type { ControlPlaneHttp, GuardrailInput, PluginDependencies, StoredCredential } from '../../core/spec/index.js';

// What the guardrails that call a vendor's moderation service share: the params every one takes
// (`baseUrl`, a secret as `apiKey` or as a stored vault `credential`, `timeoutMs`, `sides`), the
// secret's resolution (per call, so a rotated credential applies at once), the HTTP call through
// the control-plane client, and the de-duplication of identical texts within one check.

/** The params every vendor guardrail takes. */
export interface VendorParams {
  /** The service's base URL (a private deployment, a regional endpoint, a test's fake). */
  baseUrl?: string;
  /** The secret itself (typically `process.env.X!` in `gateway.config.ts`); never listed. */
  apiKey?: string;
  /** Or the id of a credential stored in the vault (`POST /admin/credentials`), read when a check runs. */
  credential?: string;
  /** Time allowed for the service's answer (default 2000 ms); the policy step's `timeoutMs` also applies. */
  timeoutMs?: number;
  /** Which sides it judges (default: every side the plugin supports). */
  sides?: Array<'input' | 'output'>;
}

/** JSON Schema properties of {@link VendorParams}, for a manifest's `params.properties`. */
export const VENDOR_PARAM_PROPERTIES = {
  baseUrl: { type: 'string', pattern: '^https?://' },
  apiKey: { type: 'string', minLength: 1, writeOnly: true },
  credential: { type: 'string', minLength: 1, maxLength: 128 },
  timeoutMs: { type: 'integer', minimum: 1 },
  sides: { type: 'array', minItems: 1, items: { enum: ['input', 'output'] } },
} as const;

export const DEFAULT_VENDOR_TIMEOUT_MS = 2000;

/** A vendor's failure: its HTTP status, or what was wrong with its answer. Never carries a secret or a judged text. */
export class VendorError extends Error {
  constructor(
    readonly vendor: string,
    message: string,
    readonly status?: number,
  ) {
    super(`${vendor}: ${message}`);
    this.name = 'VendorError';
  }
}

/**
 * How a plugin gets its secret: `apiKey` as given, or the stored credential's, opened when a check
 * runs. Exactly one of them (unless `optional`: a self-hosted service without authentication).
 * Throws at creation (a boot error naming the policy and guardrail) when both or, unless optional, neither are given.
 */
export function secretSource(
  vendor: string,
  params: Pick<VendorParams, 'apiKey' | 'credential'>,
  dependencies: PluginDependencies,
  optional = false,
): () => Promise<StoredCredential | undefined> {
  if (params.apiKey !== undefined && params.credential !== undefined) throw new Error('give apiKey or credential, not both');
  if (params.apiKey === undefined && params.credential === undefined) {
    if (optional) return async () => undefined;
    throw new Error('give apiKey or credential (a stored credential id)');
  }
  if (params.apiKey !== undefined) {
    const given: StoredCredential = { apiKey: params.apiKey };
    return async () => given;
  }
  const id = params.credential!;
  return async () => {
    try {
      return await dependencies.credential(id);
    } catch {
      // The vault's message may name the id only; keep it short and free of anything secret.
      throw new VendorError(vendor, `the stored credential "${id}" cannot be read`);
    }
  };
}

/** The secret's API key, or a VendorError naming what is missing. */
export function requireApiKey(vendor: string, secret: StoredCredential | undefined): string {
  if (!secret?.apiKey) throw new VendorError(vendor, 'the credential has no API key');
  return secret.apiKey;
}

/** `baseUrl` without its trailing slashes. */
export const trimBase = (baseUrl: string): string => baseUrl.replace(/\/+$/, '');

/** True when the plugin judges this side. */
export const judgesSide = (params: Pick<VendorParams, 'sides'>, input: GuardrailInput): boolean => params.sides === undefined || params.sides.includes(input.side);

/**
 * POSTs JSON through the gateway's control-plane client (no redirects followed, the step's own
 * time limit) and returns the parsed answer. A non-2xx status or an answer that is not JSON throws
 * a {@link VendorError} with the status only: the vendor's body may echo the judged text.
 */
export async function postJson(
  http: ControlPlaneHttp,
  vendor: string,
  url: string,
  body: unknown,
  headers: Record<string, string>,
  timeoutMs: number,
  /** The exact bytes to send, when they were signed (SigV4). */
  raw?: string,
): Promise<unknown> {
  let response: AxiosResponse<string>;
  try {
    response = await http.post<string>(url, raw ?? JSON.stringify(body), {
      timeout: timeoutMs,
      maxRedirects: 0,
      responseType: 'text',
      transformResponse: [(data) => data],
      validateStatus: () => true,
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    });
  } catch (error) {
    // The axios error carries the request's headers (the secret): only its code is kept.
    const code = (error as { code?: unknown }).code;
    throw new VendorError(vendor, `request failed${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  if (response.status < 200 || response.status > 299) throw new VendorError(vendor, `answered HTTP ${response.status}`, response.status);
  try {
    return JSON.parse(response.data);
  } catch {
    throw new VendorError(vendor, 'answered with a body that is not JSON', response.status);
  }
}

/**
 * Judges each distinct non-empty text once (identical texts within a check share one call), all at
 * once, and returns the results in the order of `texts` (undefined for an empty text).
 */
export async function eachDistinct<Result>(texts: readonly string[], judge: (text: string) => Promise<Result>): Promise<Array<Result | undefined>> {
  const distinct = [...new Set(texts.filter((text) => text.trim().length > 0))];
  const results = new Map<string, Result>();
  await Promise.all(distinct.map(async (text) => results.set(text, await judge(text))));
  return texts.map((text) => results.get(text));
}

/** A value read from a vendor's answer, or a VendorError saying the answer is not what its API documents. */
export function expect<Value>(vendor: string, value: Value | undefined | null, what: string): Value {
  if (value === undefined || value === null) throw new VendorError(vendor, `answer has no ${what}`);
  return value;
}
