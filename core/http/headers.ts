import type { IncomingHttpHeaders } from 'node:http';

/** Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection and are never forwarded. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Node's header object with repeated values joined, as plain strings. */
export function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const name in headers) {
    const value = headers[name];
    flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/**
 * Whether an upstream response header could act on the gateway's own origin if relayed: cookies
 * (`Set-Cookie` could overwrite the dashboard session) and CORS grants (`Access-Control-*` could
 * open the gateway's answers to other sites).
 */
export function actsOnGatewayOrigin(name: string): boolean {
  return name === 'set-cookie' || name === 'set-cookie2' || name.startsWith('access-control-');
}

/**
 * Upstream response headers fit to send back: hop-by-hop ones and those the `Connection` header
 * names removed, and those that act on the gateway's origin ({@link actsOnGatewayOrigin}) unless
 * `relayUnsafe` (the config's `passthrough.relayUnsafeHeaders`).
 */
export function endToEndHeaders(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  options: { relayUnsafe?: boolean } = {},
): Record<string, string | string[]> {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
  const kept: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    if (!options.relayUnsafe && actsOnGatewayOrigin(name)) continue;
    kept[name] = value;
  }
  return kept;
}
