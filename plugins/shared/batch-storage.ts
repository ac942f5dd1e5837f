import { type BatchLineResult, errors, errorTypeForStatus } from '../../core/spec/index.js';

/** A bucket and a prefix (no leading or trailing slash) in a cloud's object storage. */
export interface BucketLocation {
  readonly bucket: string;
  readonly prefix: string;
}

/** A prefix of characters that need no encoding in an object's URL or its signature. */
export const PLAIN_PREFIX = /^[A-Za-z0-9._/-]*$/;

/** How a cloud's storage URIs are checked: `<scheme>://<bucket>/<prefix>`. */
export interface BucketUriRule {
  readonly scheme: 's3' | 'gs';
  readonly bucket: RegExp;
  readonly prefix: RegExp;
  /** The end of the 400's message after `Invalid '<param>': ` (an example of a valid location). */
  readonly expected: string;
}

/** A storage URI as a bucket and a prefix; 400 `invalid_value` naming `param` when it breaks the rule or climbs (`..`). */
export function parseBucketUri(uri: string, param: string, rule: BucketUriRule): BucketLocation {
  const match = new RegExp(`^${rule.scheme}:\\/\\/([^/]+)\\/?(.*)$`).exec(uri.trim());
  const prefix = match?.[2].replace(/\/+$/, '') ?? '';
  if (!match || !rule.bucket.test(match[1]) || !rule.prefix.test(prefix) || prefix.split('/').includes('..')) {
    throw errors.invalidRequest(`Invalid '${param}': ${rule.expected}`, { param, code: 'invalid_value' });
  }
  return { bucket: match[1], prefix };
}

/** An object's key under a location: the prefix and the parts, joined by `/`. */
export const objectKey = (location: BucketLocation, ...parts: string[]): string => [location.prefix, ...parts].filter((part) => part !== '').join('/');

/** A batch job's JSONL output, one parsed value per non-blank line (throws on a line that is not JSON). */
export const jsonLines = (body: Uint8Array): unknown[] =>
  Buffer.from(body)
    .toString('utf8')
    .split('\n')
    .filter((text) => text.trim() !== '')
    .map((text) => JSON.parse(text) as unknown);

/** A line the job answered with an error: OpenAI's error object for that HTTP status. */
export const erroredLine = (customId: string, status: number, message: string): BatchLineResult => ({
  customId,
  kind: 'errored',
  status,
  error: { message, type: errorTypeForStatus(status), param: null, code: null },
});
