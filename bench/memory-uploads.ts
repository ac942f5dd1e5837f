// Memory check (not a test, not timed): 40 concurrent unauthenticated 24 MB uploads, JSON and
// multipart, against a gateway child process; prints the gateway's RSS increase and whether it
// stayed under 50 MB, and how many upload folders it left in its temporary folder.
// `npm run bench:memory-uploads`.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAllServers, startServer, stopAllServers } from './children.js';
import { CHILD_ENVIRONMENT } from './protocol.js';
import { RssSampler } from './rss.js';

const MB = 1024 * 1024;
const UPLOAD_BYTES = 24 * MB;
const UPLOADS = 40;
const LIMIT_BYTES = 50 * MB;
const SAMPLE_MS = 20;
const PIECE = Buffer.alloc(64 * 1024, 0x20);
const BOUNDARY = 'memory-uploads';

interface Outcome {
  status?: number;
  sentBytes: number;
}

/** One upload of `UPLOAD_BYTES` with a wrong key, written piece by piece until the gateway answers or closes. */
function upload(url: string, path: string, contentType: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const outcome: Outcome = { sentBytes: 0 };
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      resolve(outcome);
    };
    const client = request(new URL(path, url), {
      method: 'POST',
      headers: { 'x-gateway-api-key': 'gw-not-the-key-0123456789', 'content-type': contentType, 'content-length': String(UPLOAD_BYTES) },
    });
    client.on('response', (response) => {
      outcome.status = response.statusCode;
      response.resume();
      response.once('end', finish);
      response.once('error', finish);
    });
    client.on('error', finish);
    client.on('close', finish);
    const write = (): void => {
      while (!done && !client.destroyed && outcome.sentBytes < UPLOAD_BYTES) {
        const piece = PIECE.subarray(0, Math.min(PIECE.length, UPLOAD_BYTES - outcome.sentBytes));
        outcome.sentBytes += piece.length;
        if (!client.write(piece)) return void client.once('drain', write);
      }
      if (outcome.sentBytes >= UPLOAD_BYTES) client.end();
    };
    write();
  });
}

async function main(): Promise<void> {
  const spool = mkdtempSync(join(tmpdir(), 'memory-uploads-'));
  const gateway = await startServer('gateway', { [CHILD_ENVIRONMENT.gatewayApiKey]: 'gw-memory-uploads-key-0123456789', TMPDIR: spool });
  try {
    const baseline = await gateway.rss();
    const sampler = new RssSampler(() => gateway.rss(), SAMPLE_MS).start();
    const started = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: UPLOADS }, (_, index) =>
        index % 2 === 0
          ? upload(gateway.url, '/v1/chat/completions', 'application/json')
          : upload(gateway.url, '/v1/audio/transcriptions', `multipart/form-data; boundary=${BOUNDARY}`),
      ),
    );
    const elapsed = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const window = await sampler.stop();
    const increase = window.maxBytes - baseline;
    const statuses = new Map<string, number>();
    for (const { status } of outcomes) statuses.set(String(status ?? 'closed'), (statuses.get(String(status ?? 'closed')) ?? 0) + 1);
    const sent = outcomes.reduce((sum, outcome) => sum + outcome.sentBytes, 0);
    const leftovers = readdirSync(spool).filter((name) => name.startsWith('gateway-upload-')).length;
    console.log(`uploads: ${UPLOADS} unauthenticated x ${UPLOAD_BYTES / MB} MB (half JSON, half multipart), answered in ${elapsed.toFixed(0)} ms`);
    console.log(`statuses: ${[...statuses].map(([status, count]) => `${status} x${count}`).join(', ')}; bytes the client got to write: ${(sent / MB).toFixed(1)} MB`);
    console.log(`gateway RSS: ${(baseline / MB).toFixed(1)} MB before, ${(window.maxBytes / MB).toFixed(1)} MB at most (${window.samples} samples)`);
    console.log(`upload folders spooled: ${leftovers}`);
    console.log(`${increase < LIMIT_BYTES ? 'PASS' : 'MISS'}: RSS increase ${(increase / MB).toFixed(1)} MB (< ${LIMIT_BYTES / MB} MB)`);
  } finally {
    await stopAllServers();
    rmSync(spool, { recursive: true, force: true });
  }
}

process.on('exit', killAllServers);
main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
