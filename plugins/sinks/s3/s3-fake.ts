import { intakeFake } from '../../shared/intake-fake.js';

// A loopback fake of S3's PutObject with path-style addressing: `PUT /<bucket>/<key>`, signed with
// Signature Version 4 (`Authorization: AWS4-HMAC-SHA256 Credential=<access key id>/<date>/<region>/s3/aws4_request, ...`;
// the signature itself is not recomputed), `x-amz-content-sha256` present; answers 200 with an
// ETag, 403 `InvalidAccessKeyId` for another key, 404 `NoSuchBucket`. Objects are kept as sent
// (with their Content-Type and Content-Encoding). `failing` answers 503 `SlowDown`.

export interface S3Fake {
  readonly url: string;
  readonly objects: Map<string, { body: Buffer; contentType?: string; contentEncoding?: string }>;
  failing: boolean;
  close(): void;
}

const error = (status: number, code: string) => ({ status, headers: { 'content-type': 'application/xml' }, body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>` });

export async function s3Fake(bucket: string, accessKeyId: string): Promise<S3Fake> {
  const state = { objects: new Map<string, { body: Buffer; contentType?: string; contentEncoding?: string }>(), failing: false };
  const server = await intakeFake(({ method, url, headers, body }) => {
    const [, name, ...key] = url.split('?')[0].split('/');
    if (method !== 'PUT' || key.length === 0) return error(405, 'MethodNotAllowed');
    if (name !== bucket) return error(404, 'NoSuchBucket');
    const authorization = String(headers.authorization ?? '');
    if (!authorization.startsWith(`AWS4-HMAC-SHA256 Credential=${accessKeyId}/`) || !/\/s3\/aws4_request/.test(authorization)) return error(403, 'InvalidAccessKeyId');
    if (!headers['x-amz-content-sha256']) return error(400, 'MissingSecurityHeader');
    if (state.failing) return error(503, 'SlowDown');
    state.objects.set(decodeURIComponent(key.join('/')), { body, contentType: headers['content-type'] as string, contentEncoding: headers['content-encoding'] as string });
    return { status: 200, headers: { etag: '"fake"' }, body: '' };
  }, false);
  return Object.assign(state, { url: server.url, close: () => server.close() });
}
