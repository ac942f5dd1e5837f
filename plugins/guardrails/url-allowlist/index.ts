import { ALLOW, defineGuardrail, replaceSpans, type Span } from '../../../core/guardrails/define.js';

export interface UrlAllowlistParams {
  /** Allowed hosts: `example.com` (exactly) or `*.example.com` (any subdomain, and the domain itself). */
  hosts: string[];
  /** Allowed schemes (default `["https"]`). */
  schemes?: string[];
  /** `deny` (default) or `redact` (replace a disallowed URL with `replacement`). */
  action?: 'deny' | 'redact';
  /** Default `[URL REMOVED]`. */
  replacement?: string;
}

const TRAILING = /[.,;:!?)\]}*_]+$/;

/** Trims trailing punctuation that ends a sentence rather than the URL. */
const trimmed = (match: string): number => match.length - (TRAILING.exec(match)?.[0].length ?? 0);

const SCHEME_CHAR = /[a-z0-9+.-]/i;
const URL_END = /[\s<>"'`]/;
const WWW = /\bwww\./gi;

/** Where the URL starting at `start` ends (before whitespace or a quote), trailing punctuation trimmed. */
function urlEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && !URL_END.test(text[end])) end++;
  return start + trimmed(text.slice(start, end));
}

/**
 * URL candidates: `scheme://…` found from each `://` outwards, and `www.…`. (A pattern scanning every
 * word start for a scheme costs several times more on the hot path.)
 */
function findUrls(text: string, partial: boolean): Span[] {
  const spans: Span[] = [];
  const add = (start: number, rawEnd: number) => {
    if (partial && rawEnd >= text.length) return;
    const end = urlEnd(text, start);
    if (end > start && !spans.some((span) => span.start <= start && start < span.end)) spans.push({ start, end, kind: 'url' });
  };
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', at + 3)) {
    let start = at;
    while (start > 0 && at - start < 16 && SCHEME_CHAR.test(text[start - 1])) start--;
    while (start < at && !/[a-z]/i.test(text[start])) start++;
    if (at - start < 2) continue;
    let rawEnd = at + 3;
    while (rawEnd < text.length && !URL_END.test(text[rawEnd])) rawEnd++;
    add(start, rawEnd);
  }
  if (text.includes('www.') || text.includes('WWW.')) {
    WWW.lastIndex = 0;
    for (let match = WWW.exec(text); match !== null; match = WWW.exec(text)) {
      let rawEnd = match.index;
      while (rawEnd < text.length && !URL_END.test(text[rawEnd])) rawEnd++;
      add(match.index, rawEnd);
    }
  }
  return spans.sort((left, right) => left.start - right.start);
}

/** Denies (or redacts) URLs whose syntax is invalid or whose host is not allowed. No network is used. */
export const urlAllowlist = defineGuardrail<UrlAllowlistParams>(
  {
    id: 'url-allowlist',
    version: '1.0.0',
    description: 'Denies or redacts URLs in the text whose syntax is invalid, scheme is not allowed or host is not on the allowlist (no network).',
    stages: ['input', 'output'],
    incremental: true,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['hosts'],
      properties: {
        hosts: { type: 'array', items: { type: 'string', pattern: '^(\\*\\.)?[a-z0-9.-]+$' } },
        schemes: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^[a-z][a-z0-9+.-]*$' } },
        action: { enum: ['deny', 'redact'] },
        replacement: { type: 'string' },
      },
    },
  },
  (params) => {
    const exact = new Set(params.hosts.filter((host) => !host.startsWith('*.')).map((host) => host.toLowerCase()));
    const suffixes = params.hosts.filter((host) => host.startsWith('*.')).map((host) => host.slice(1).toLowerCase());
    const schemes = new Set((params.schemes ?? ['https']).map((scheme) => `${scheme.toLowerCase()}:`));
    const allowed = (candidate: string): boolean => {
      let url: URL;
      try {
        url = new URL(candidate.toLowerCase().startsWith('www.') ? `https://${candidate}` : candidate);
      } catch {
        return false;
      }
      const host = url.hostname.toLowerCase();
      return schemes.has(url.protocol) && (exact.has(host) || suffixes.some((suffix) => host.endsWith(suffix) || host === suffix.slice(1)));
    };
    return (input) => {
      const found: Span[][] = input.texts.map((text) =>
        findUrls(text, input.partial).filter((span) => !allowed(text.slice(span.start, span.end))),
      );
      const count = found.reduce((sum, spans) => sum + spans.length, 0);
      if (count === 0) return ALLOW;
      if (params.action !== 'redact') return { action: 'deny', reason: 'text links to a host that is not allowed' };
      const replacement = params.replacement ?? '[URL REMOVED]';
      return { action: 'transform', texts: input.texts.map((text, index) => replaceSpans(text, found[index], () => replacement)), changes: { url: count } };
    };
  },
);
