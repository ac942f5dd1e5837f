import { createHash, createHmac } from 'node:crypto';

/** AWS credentials for Signature Version 4. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Temporary credentials' session token, sent (and signed) as `x-amz-security-token`. */
  readonly sessionToken?: string;
}

export interface SigningScope {
  readonly region: string;
  readonly service: string;
}

/** A request to sign. `url` keeps its path exactly as it goes on the wire (already percent-encoded). */
export interface SignableRequest {
  readonly method: string;
  readonly url: string;
  /** Headers to sign besides `host`, `x-amz-date` and `x-amz-security-token` (names any case). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Uint8Array;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 encoding: every byte but the unreserved characters `A-Z a-z 0-9 - _ . ~` is `%XX` (upper case). */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
}

const safeDecode = (value: string): string => {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
};

/** Splits an absolute URL without normalising its path (the `URL` class would re-encode it). */
function splitUrl(url: string): { host: string; path: string; query: string } {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?/i.exec(url);
  if (!match) throw new TypeError('SigV4 needs an absolute URL');
  const parsed = new URL(url);
  // `host` as an HTTP client sends it: without userinfo, with the port only when it is not the default.
  return { host: parsed.host, path: match[2] || '/', query: match[3] ?? '' };
}

/**
 * The canonical URI of every service but S3: each path segment, as sent, encoded once more (so a
 * Bedrock model id `a:b`, sent as `a%3Ab`, is signed as `a%253Ab`, as the AWS SDKs do).
 */
export const canonicalUri = (path: string): string => path.split('/').map(uriEncode).join('/');

/** Parameters decoded, then RFC 3986 encoded and sorted by name, then value. */
export function canonicalQuery(query: string): string {
  if (!query) return '';
  return query
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      const value = equals === -1 ? '' : pair.slice(equals + 1);
      return [uriEncode(safeDecode(name)), uriEncode(safeDecode(value))] as const;
    })
    .sort(([nameA, valueA], [nameB, valueB]) => (nameA < nameB ? -1 : nameA > nameB ? 1 : valueA < valueB ? -1 : valueA > valueB ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/** `20150830T123600Z` */
export const amzDate = (date: Date): string => date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');

export interface SigningResult {
  /** Headers to add to the request: `authorization`, `x-amz-date` and, with a session token, `x-amz-security-token`. */
  readonly headers: Record<string, string>;
  readonly canonicalRequest: string;
  readonly stringToSign: string;
  readonly signature: string;
}

/**
 * Signs a request with AWS Signature Version 4 (header form). Signed headers: `host`, `x-amz-date`,
 * `x-amz-security-token` when there is a session token, and every header in `request.headers`.
 */
export function signRequest(request: SignableRequest, credentials: AwsCredentials, scope: SigningScope, now: Date = new Date()): SigningResult {
  const { host, path, query } = splitUrl(request.url);
  const timestamp = amzDate(now);
  const day = timestamp.slice(0, 8);

  const toSign = new Map<string, string>();
  for (const [name, value] of Object.entries(request.headers)) toSign.set(name.toLowerCase(), value);
  toSign.set('host', host);
  toSign.set('x-amz-date', timestamp);
  if (credentials.sessionToken) toSign.set('x-amz-security-token', credentials.sessionToken);
  const names = [...toSign.keys()].sort();
  const canonicalHeaders = names.map((name) => `${name}:${toSign.get(name)!.trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');

  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalUri(path),
    canonicalQuery(query),
    canonicalHeaders,
    signedHeaders,
    sha256Hex(request.body),
  ].join('\n');
  const credentialScope = `${day}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = [ALGORITHM, timestamp, credentialScope, sha256Hex(canonicalRequest)].join('\n');

  const dateKey = hmac(`AWS4${credentials.secretAccessKey}`, day);
  const signingKey = hmac(hmac(hmac(dateKey, scope.region), scope.service), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');

  const headers: Record<string, string> = {
    'x-amz-date': timestamp,
    authorization: `${ALGORITHM} Credential=${credentials.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
  return { headers, canonicalRequest, stringToSign, signature };
}
