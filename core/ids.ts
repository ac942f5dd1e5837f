import { randomFillSync } from 'node:crypto';

/** Random bytes drawn ahead (one system call per 409 ids), used once each. */
const random = Buffer.alloc(4096);
let randomAt = random.length;
/** The id's characters, written in place and read as one string. */
const text = Buffer.alloc(36);
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** Writes `count` hex digits of `value` (the low ones, most significant first) at `at`. */
function hexInto(value: number, at: number, count: number): void {
  for (let index = at + count - 1; index >= at; index--) {
    text[index] = HEX[value % 16];
    value = Math.floor(value / 16);
  }
}

/** Writes the hex digits of `count` random bytes at `at`. */
function randomHexInto(at: number, count: number): void {
  for (let index = 0; index < count; index++) {
    const byte = random[randomAt++];
    text[at + 2 * index] = HEX[byte >> 4];
    text[at + 2 * index + 1] = HEX[byte & 15];
  }
}

/**
 * A UUIDv7 (48-bit millisecond time, then random): ids sort by time, so the stores' indexes on
 * them (log entry ids, generated trace ids) grow at their end instead of taking random inserts.
 * Written byte by byte into one buffer and read as one string (issue 21: building it from
 * `randomUUID()` and string slices allocated ~0.9 KB per id, two ids per request); its 74 random
 * bits come from a pool of cryptographically random bytes.
 */
export function timeOrderedId(now = Date.now()): string {
  if (randomAt + 10 > random.length) {
    randomFillSync(random);
    randomAt = 0;
  }
  // xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx: the time in the first 12 digits, version 7, variant 10.
  hexInto(Math.floor(now / 65536), 0, 8);
  text[8] = 45; // '-'
  hexInto(now % 65536, 9, 4);
  text[13] = 45;
  text[14] = 55; // '7'
  const first = random[randomAt++];
  const second = random[randomAt++];
  text[15] = HEX[first & 15];
  text[16] = HEX[second >> 4];
  text[17] = HEX[second & 15];
  text[18] = 45;
  text[19] = HEX[8 | ((first >> 4) & 3)];
  randomHexInto(20, 1);
  text[22] = HEX[random[randomAt++] & 15];
  text[23] = 45;
  randomHexInto(24, 6);
  return text.toString('latin1', 0, 36);
}
