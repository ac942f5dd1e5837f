import { ALLOW, defineGuardrail, replaceSpans, spanValues, type Span } from '../../../core/spec/index.js';

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

/** Trailing punctuation that ends a sentence rather than the URL. */
const TRAILING = new Set('.,;:!?)]}*_');
const SCHEME_CHAR = /[a-z0-9+.-]/i;
const URL_END = /[\s<>"'`]/;
const WWW = /\bwww\./gi;

/** The end of the non-whitespace run starting at `start` (before whitespace or a quote). */
function runEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && !URL_END.test(text[end])) end++;
  return end;
}

/** `rawEnd` moved back over trailing punctuation (a backwards loop: a pattern anchored at `$` is quadratic on long runs). */
function trimmedEnd(text: string, start: number, rawEnd: number): number {
  let end = rawEnd;
  while (end > start && TRAILING.has(text[end - 1])) end--;
  return end;
}

/**
 * URL candidates: `scheme://…` found from each `://` outwards, and `www.…`. (A pattern scanning every
 * word start for a scheme costs several times more on the hot path.) Each pass resumes after the run
 * it just read, so every character is scanned a bounded number of times: a candidate starting inside
 * an earlier URL's run starts at a letter, which trailing punctuation never is, so it would overlap.
 */
function findUrls(text: string, partial: boolean): Span[] {
  const schemed: Span[] = [];
  for (let at = text.indexOf('://'); at !== -1; ) {
    let start = at;
    while (start > 0 && at - start < 16 && SCHEME_CHAR.test(text[start - 1])) start--;
    while (start < at && !/[a-z]/i.test(text[start])) start++;
    if (at - start < 2) {
      at = text.indexOf('://', at + 3);
      continue;
    }
    const rawEnd = runEnd(text, at + 3);
    if (!partial || rawEnd < text.length) schemed.push({ start, end: trimmedEnd(text, start, rawEnd), kind: 'url' });
    at = text.indexOf('://', rawEnd);
  }
  if (!text.includes('www.') && !text.includes('WWW.')) return schemed;
  const spans = [...schemed];
  let next = 0;
  WWW.lastIndex = 0;
  for (let match = WWW.exec(text); match !== null; match = WWW.exec(text)) {
    const start = match.index;
    const rawEnd = runEnd(text, start);
    WWW.lastIndex = Math.max(rawEnd, start + 4);
    while (next < schemed.length && schemed[next].end <= start) next++;
    if (next < schemed.length && schemed[next].start <= start) continue;
    if (!partial || rawEnd < text.length) spans.push({ start, end: trimmedEnd(text, start, rawEnd), kind: 'url' });
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
      const flagged = spanValues(input.texts, found);
      if (params.action !== 'redact') return { action: 'deny', reason: 'text links to a host that is not allowed', flagged };
      const replacement = params.replacement ?? '[URL REMOVED]';
      return { action: 'transform', texts: input.texts.map((text, index) => replaceSpans(text, found[index], () => replacement)), changes: { url: count }, flagged };
    };
  },
);
