import type { IncomingMessage } from 'node:http';

/** `::ffff:127.0.0.1` and `127.0.0.1` are one client. */
const normalise = (address: string): string => (address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address);

/**
 * The client's address. With `trustProxy` 0 it is the socket's peer. With N > 0 the last N proxies
 * are trusted: each appends the address it saw to X-Forwarded-For, so the client is the N-th entry
 * from the right (entries further left were written by the client and may be forged). A header with
 * fewer entries than that gives its leftmost one.
 */
export function clientAddress(request: IncomingMessage, trustProxy: number): string {
  const peer = normalise(request.socket.remoteAddress ?? 'unknown');
  if (trustProxy <= 0) return peer;
  const forwarded = request.headers['x-forwarded-for'];
  const list = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? ''))
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (list.length === 0) return peer;
  return normalise(list[Math.max(0, list.length - trustProxy)]);
}
