import { deflateSync } from 'node:zlib';

/** CRC-32 as PNG chunks use it (polynomial 0xEDB88320). */
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };

/**
 * A real, decodable PNG: 8-bit, the given colour type (0 grey, 2 RGB, 4 grey+alpha, 6 RGBA),
 * filled with a gradient; `transparency` adds a tRNS chunk; `padTo` appends a private ancillary
 * chunk so the file reaches exactly that many bytes (for the 4 MB edges).
 */
export function makePng(options: { width: number; height: number; colourType?: 0 | 2 | 4 | 6; transparency?: boolean; padTo?: number }): Buffer {
  const { width, height, colourType = 6 } = options;
  const channels = CHANNELS[colourType];
  const raw = Buffer.alloc((width * channels + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * channels + 1);
    for (let x = 0; x < width * channels; x++) raw[row + 1 + x] = (x + y) & 0xff;
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = colourType;
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr)];
  if (options.transparency) parts.push(chunk('tRNS', colourType === 2 ? Buffer.alloc(6) : Buffer.alloc(2)));
  const image = chunk('IDAT', deflateSync(raw));
  const end = chunk('IEND', Buffer.alloc(0));
  let png = Buffer.concat([...parts, image, end]);
  if (options.padTo !== undefined) {
    const padding = options.padTo - png.length - 12;
    if (padding < 0) throw new Error(`cannot pad a ${png.length}-byte PNG to ${options.padTo}`);
    png = Buffer.concat([...parts, chunk('prVt', Buffer.alloc(padding, 7)), image, end]);
  }
  return png;
}
