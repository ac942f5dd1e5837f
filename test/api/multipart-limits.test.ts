import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { multipartHandler } from '../fakes/multipart-fake.js';
import { gatewayHeaders, startGateway, type TestGateway } from '../harness.js';
import { privateUploads } from './uploads.js';

const { noUploadsLeft } = privateUploads('multipart-limits');

let gateway: TestGateway;
let fake: Fake;

test.before(async () => {
  fake = await startFake(multipartHandler);
  gateway = await startGateway();
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const MB = 1024 * 1024;
const BOUNDARY = 'limits-boundary';
/**
 * Streams a multipart upload of `fileBytes` generated on the fly (never held whole), honouring
 * back-pressure, until the server answers or the upload is done. `declare` sends a Content-Length.
 */
function upload(path: string, fileBytes: number, options: { declare?: boolean; abortAfter?: number } = {}) {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const headers: Record<string, string> = {
    ...gatewayHeaders(fake.baseUrl),
    'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
  };
  if (options.declare) headers['content-length'] = String(head.length + fileBytes + tail.length);
  const url = new URL(path, gateway.url);
  const request = httpRequest(url, { method: 'POST', headers });
  let sent = 0;
  let answered = false;
  const response = new Promise<{ status: number; body: string } | { aborted: true }>((resolve) => {
    request.on('response', async (incoming) => {
      answered = true;
      let body = '';
      for await (const chunk of incoming) body += chunk;
      resolve({ status: incoming.statusCode ?? 0, body });
    });
    request.on('error', () => resolve({ aborted: true }));
    request.on('close', () => {
      if (!answered) resolve({ aborted: true });
    });
  });
  const closed = once(request, 'close').catch(() => undefined);
  const writing = (async () => {
    const piece = Buffer.alloc(64 * 1024, 0x41);
    request.write(head);
    while (sent < fileBytes && !answered && !request.destroyed) {
      if (options.abortAfter !== undefined && sent >= options.abortAfter) {
        request.destroy();
        return;
      }
      const size = Math.min(piece.length, fileBytes - sent);
      sent += size;
      if (!request.write(piece.subarray(0, size))) {
        await new Promise<void>((resolve) => {
          const done = () => {
            request.off('drain', done);
            resolve();
          };
          request.once('drain', done);
          void closed.then(done);
          void response.then(done);
        });
      }
    }
    if (!answered && !request.destroyed) request.end(tail);
  })();
  return { response, writing, sent: () => sent };
}

test.serial('a 50 MB upload without Content-Length is refused with 413 without the process holding it', async (t) => {
  // Warm up (first-use allocations of the HTTP and file paths), then measure.
  t.like(await upload('/v1/images/edits', 20 * MB).response, { status: 413 });
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc (ava nodeArguments in package.json)');
  // What the process holds (the JavaScript heap and Buffers: where a kept upload would be) and its
  // RSS. After the upload only what it holds is compared: on a loaded machine glibc and V8 kept
  // freed pages mapped (RSS 10–21 MB up after the collection in some runs), which is not the upload
  // being held; an upload buffered whole shows in the peak below. V8 releases Buffers' memory on a background thread after a collection, so each
  // reading waits for that to settle (a held upload never does).
  const held = () => {
    const usage = process.memoryUsage();
    return usage.heapUsed + usage.arrayBuffers;
  };
  const settled = async (isSettled: (value: number) => boolean) => {
    gc();
    let value = held();
    for (let attempt = 0; attempt < 30 && !isSettled(value); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      gc();
      value = held();
    }
    return value;
  };
  let previous = Number.POSITIVE_INFINITY;
  const heldBefore = await settled((value) => {
    const steady = Math.abs(value - previous) < MB;
    previous = value;
    return steady;
  });
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  const { response, writing, sent } = upload('/v1/images/edits', 50 * MB);
  const answer = await response;
  await writing;
  // The gateway has cleaned up once its upload folder is gone (the response closed).
  await noUploadsLeft(t);
  clearInterval(sampler);
  const heldAfter = await settled((value) => value - heldBefore < 10 * MB);
  const after = process.memoryUsage().rss;
  t.log(`RSS peak growth during the upload ${((peak - before) / MB).toFixed(1)} MB`);
  t.like(answer, { status: 413 });
  if ('body' in answer) t.is(JSON.parse(answer.body).error.code, 'body_too_large');
  t.true(sent() < 50 * MB, `the gateway stopped the upload early (${sent()} bytes were written)`);
  t.true(peak - before < 25 * MB, `RSS peaked ${((peak - before) / MB).toFixed(1)} MB above the start for a 50 MB upload`);
  t.true(heldAfter - heldBefore < 10 * MB, `the process holds ${((heldAfter - heldBefore) / MB).toFixed(1)} MB more (heap and Buffers) after a 50 MB upload`);
  t.log(`held ${((heldAfter - heldBefore) / MB).toFixed(1)} MB more; RSS growth ${((after - before) / MB).toFixed(1)} MB; bytes written before refusal ${(sent() / MB).toFixed(1)} MB`);
});

test.serial('a declared 50 MB Content-Length is refused with 413 before the body is read', async (t) => {
  const { response, sent } = upload('/v1/audio/transcriptions', 50 * MB, { declare: true });
  const answer = await response;
  t.like(answer, { status: 413 });
  t.true(sent() < 50 * MB);
  await noUploadsLeft(t);
});

test.serial('a 30 MB transcription upload (over the 25 MB body limit) is refused with 413 while streaming', async (t) => {
  const { response } = upload('/v1/audio/transcriptions', 30 * MB);
  t.like(await response, { status: 413 });
  await noUploadsLeft(t);
});

test.serial('a client that goes away mid-upload leaves no temporary files', async (t) => {
  const { response, writing } = upload('/v1/audio/transcriptions', 20 * MB, { abortAfter: 2 * MB });
  await writing;
  t.like(await response, { aborted: true });
  await noUploadsLeft(t);
  const deadline = Date.now() + 3000;
  const aborted = () => gateway.entries().some((entry) => entry.operation === 'transcription' && entry.status === 499);
  while (!aborted() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  t.true(aborted(), JSON.stringify(gateway.entries().map((entry) => [entry.operation, entry.status])));
});

test.serial('an upload under the limit still goes through and leaves nothing behind', async (t) => {
  const { response } = upload('/v1/audio/transcriptions', 3 * MB, { declare: true });
  const answer = await response;
  t.like(answer, { status: 200 });
  const received = fake.requests.at(-1);
  t.true((received?.body.length ?? 0) > 3 * MB);
  await noUploadsLeft(t);
});
