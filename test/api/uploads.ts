import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';

/**
 * Uploads are spooled under os.tmpdir(): this gives the calling test file (one process) a folder of
 * its own, so that leftover upload folders can be counted. Call it before any request is made.
 */
export function privateUploads(label: string): { noUploadsLeft(t: ExecutionContext): Promise<void> } {
  const uploads = mkdtempSync(join(tmpdir(), `${label}-`));
  process.env.TMPDIR = uploads;
  const left = () => readdirSync(uploads).filter((name) => name.startsWith('gateway-upload-'));
  return {
    /** Upload folders are removed when the response closes, just after the client has its answer. */
    async noUploadsLeft(t) {
      const deadline = Date.now() + 3000;
      while (left().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      t.deepEqual(left(), [], 'temporary upload files were removed');
    },
  };
}
