import { errors, type GatewayError } from '../errors.js';

const invalidPath = (path: string, why: string): GatewayError =>
  errors.invalidRequest(`The request path ${JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path)} is not accepted: ${why}.`, {
    code: 'invalid_path',
  });

/** Characters a path may hold as they are: RFC 3986 pchar minus what WHATWG URL parsing would re-encode. */
const PLAIN = /^[A-Za-z0-9\-._~!$&'()*+,;=:@|^[\]]$/;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const HEX = /^[0-9A-Fa-f]{2}$/;
/** Paths that need no rewriting and cannot hold a dot segment, an escape or a backslash: the hot path. */
const SIMPLE = /^(?:\/[A-Za-z0-9\-_~!$&'()*+,;=:@]+(?:\.[A-Za-z0-9\-_~!$&'()*+,;=:@]+)*)+\/?$/;

/**
 * The path a request is routed on and sent upstream with, or a 400 `invalid_path`. Percent-encoded
 * unreserved characters are decoded and other escapes upper-cased (RFC 3986 § 6.2.2), characters
 * URL parsing would re-encode are encoded, so the result is what an upstream sees after its own
 * normalisation. Refused: `.` and `..` segments, raw or encoded (`%2e`, `%2E`, mixed), encoded
 * slashes and backslashes in a segment, raw backslashes, empty segments and malformed escapes.
 * Issue 14: `/v1/x/%2e%2e/chat/completions` was routed as a pass-through, then normalised back to
 * `/v1/chat/completions` by `new URL()`, so the guardrails never judged it.
 */
export function canonicalPath(path: string): string {
  if (SIMPLE.test(path)) return path;
  if (!path.startsWith('/')) throw invalidPath(path, 'it must start with "/"');
  const segments = path.slice(1).split('/');
  const canonical: string[] = [];
  for (let index = 0; index < segments.length; index++) {
    const segment = canonicalSegment(path, segments[index]);
    if (segment === '' && index < segments.length - 1) throw invalidPath(path, 'it has an empty segment ("//")');
    if (segment === '.' || segment === '..') throw invalidPath(path, 'it has a "." or ".." segment (raw or percent-encoded)');
    canonical.push(segment);
  }
  return `/${canonical.join('/')}`;
}

function canonicalSegment(path: string, segment: string): string {
  let out = '';
  for (let at = 0; at < segment.length; at++) {
    const character = segment[at];
    if (character === '%') {
      const hex = segment.slice(at + 1, at + 3);
      if (!HEX.test(hex)) throw invalidPath(path, 'it has a malformed percent-escape');
      const decoded = String.fromCharCode(Number.parseInt(hex, 16));
      if (decoded === '/' || decoded === '\\') throw invalidPath(path, 'it has an encoded slash or backslash in a segment');
      out += UNRESERVED.test(decoded) ? decoded : `%${hex.toUpperCase()}`;
      at += 2;
    } else if (character === '\\') {
      throw invalidPath(path, 'it has a backslash');
    } else if (PLAIN.test(character)) {
      out += character;
    } else {
      out += encodeURIComponent(character);
    }
  }
  return out;
}

/**
 * The path part of a request target as the client sent it (`koa.path` is parsed by the legacy URL
 * parser, which turns backslashes into slashes).
 */
export function rawPathOf(requestTarget: string | undefined): string {
  const target = requestTarget ?? '/';
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

/** A URL whose path holds a dot segment (raw or encoded): URL parsing would move it elsewhere. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?#]|$)/i;

/**
 * Refuses an upstream URL that URL parsing would normalise (a dot segment built from a model name,
 * say): the upstream URL is always the base URL plus what the request names below it.
 */
export function assertStableUrl(url: string): void {
  const pathEnd = url.search(/[?#]/);
  if (DOT_SEGMENT.test(pathEnd === -1 ? url : url.slice(0, pathEnd))) throw invalidPath(url.replace(/^[a-z]+:\/\/[^/]*/i, ''), 'it would leave the provider\'s base path');
}
