import { open } from 'node:fs/promises';

/** What the image operations need to know of a PNG: its size and whether it has an alpha channel. */
export interface PngInfo {
  readonly width: number;
  readonly height: number;
  /** Colour type 4 or 6 (grey or RGB with alpha), or a `tRNS` chunk before the image data. */
  readonly hasAlpha: boolean;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Chunks read before giving up on finding IDAT (a PNG has a handful). */
const MAX_CHUNKS = 10_000;

/**
 * Reads a PNG's header chunks from a file without loading the image: the 8-byte signature (the
 * name is not trusted), IHDR (which must come first), then chunk headers up to IDAT looking for
 * `tRNS`. Returns undefined when the bytes are not a PNG.
 */
export async function readPngInfo(path: string): Promise<PngInfo | undefined> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(33);
    const { bytesRead } = await file.read(head, 0, 33, 0);
    if (bytesRead < 33 || !head.subarray(0, 8).equals(SIGNATURE)) return undefined;
    if (head.readUInt32BE(8) !== 13 || head.toString('latin1', 12, 16) !== 'IHDR') return undefined;
    const width = head.readUInt32BE(16);
    const height = head.readUInt32BE(20);
    const colourType = head[25];
    if (width === 0 || height === 0) return undefined;
    if (colourType === 4 || colourType === 6) return { width, height, hasAlpha: true };
    let position = 33;
    const chunk = Buffer.alloc(8);
    for (let count = 0; count < MAX_CHUNKS; count++) {
      const read = await file.read(chunk, 0, 8, position);
      if (read.bytesRead < 8) break;
      const type = chunk.toString('latin1', 4, 8);
      if (type === 'tRNS') return { width, height, hasAlpha: true };
      if (type === 'IDAT' || type === 'IEND') break;
      position += 12 + chunk.readUInt32BE(0);
    }
    return { width, height, hasAlpha: false };
  } finally {
    await file.close();
  }
}
