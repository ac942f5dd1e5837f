import { isIPv6 } from 'node:net';
import { disjoint, findSpans, type Span } from '../../../core/spec/index.js';

export const PII_TYPES = ['secret', 'card', 'iban', 'ssn', 'email', 'phone', 'ipv6', 'ipv4'] as const;
export type PiiType = (typeof PII_TYPES)[number];

/** Luhn checksum over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** ISO 13616 check: move the first four characters to the end, letters to numbers, mod 97 = 1. */
export function ibanValid(candidate: string): boolean {
  const iban = candidate.replace(/ /g, '').toUpperCase();
  if (iban.length < 15 || iban.length > 34) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const character of rearranged) {
    const value = character >= 'A' ? String(character.charCodeAt(0) - 55) : character;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

/** The length of the longest valid IBAN the match starts with (the pattern may run into following capitals). */
function ibanLength(match: string): number {
  for (let end = match.length; end >= 15; end--) {
    if ((end === match.length || match[end] === ' ') && ibanValid(match.slice(0, end))) return end;
  }
  return 0;
}

/**
 * The length of the longest Luhn-valid card number of 13 to 19 digits the match starts with, ending
 * at a group boundary: the pattern takes up to 19 digits, so a card followed by more digits
 * (`4111 1111 1111 1111 12/25`, `4111111111111111 123`) is kept without them rather than dropped.
 */
function cardLength(match: string): number {
  const digits = match.replace(/\D/g, '');
  let count = digits.length;
  for (let end = match.length; end > 0 && count >= 13; end--) {
    const code = match.charCodeAt(end - 1);
    if (code < 48 || code > 57) continue;
    if ((end === match.length || match[end] === ' ' || match[end] === '-') && count <= 19 && luhnValid(digits.slice(0, count))) return end;
    count--;
  }
  return 0;
}

const digitCount = (text: string) => text.replace(/\D/g, '').length;

const isLocalPart = (code: number) =>
  (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 46 || code === 95 || code === 37 || code === 43 || code === 45;
const EMAIL_DOMAIN = /[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}/y;

/** Emails, found from each `@` outwards: a pattern scanning every word start costs 10x more. */
function findEmails(text: string, partial: boolean): Span[] {
  const spans: Span[] = [];
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && isLocalPart(text.charCodeAt(start - 1))) start--;
    if (start === at) continue;
    EMAIL_DOMAIN.lastIndex = at + 1;
    const domain = EMAIL_DOMAIN.exec(text);
    if (!domain) continue;
    const end = at + 1 + domain[0].length;
    if (partial && end >= text.length) continue;
    spans.push({ start, end, kind: 'email' });
  }
  return spans;
}

interface Detector {
  readonly type: PiiType;
  readonly pattern: RegExp;
  readonly accept?: (match: string) => boolean | number;
  /** A cheap test the text must pass before the pattern runs. */
  readonly gate?: (text: string) => boolean;
  /** A hand-written finder used instead of the pattern. */
  readonly find?: (text: string, partial: boolean) => Span[];
}

/** Detectors in priority order: when spans overlap, the earlier type wins (a card is not a phone). */
const DETECTORS: readonly Detector[] = [
  {
    type: 'secret',
    pattern:
      /\b(?:sk|pk|rk)-(?:[a-z]+-)?[A-Za-z0-9_-]{16,}|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{35}|\bgh[pousr]_[A-Za-z0-9]{36,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|-----BEGIN [A-Z ]*PRIVATE KEY-----/g,
    gate: (text) => ['k-', 'AKIA', 'AIza', '_', 'xox', 'eyJ', '-----BEGIN'].some((marker) => text.includes(marker)),
  },
  { type: 'card', pattern: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g, accept: cardLength },
  { type: 'iban', pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g, accept: ibanLength },
  { type: 'ssn', pattern: /(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)/g },
  { type: 'email', pattern: /@/g, find: findEmails },
  {
    type: 'phone',
    // International (+CC …, 8 to 15 digits) or North American national ((555) 123-4567, 555-123-4567).
    // One digit per repetition (separators between them), so a long run of digits cannot backtrack.
    pattern: /\+\d(?:[ .()-]{0,2}\d){7,14}(?!\d)|(?<!\d)\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?!\d)/g,
    accept: (match) => match.startsWith('+') ? digitCount(match) >= 8 && digitCount(match) <= 15 : true,
  },
  {
    type: 'ipv6',
    pattern: /(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Fa-f:])/g,
    accept: (match) => match.length >= 3 && isIPv6(match),
    gate: (text) => text.includes(':') && /::|[0-9A-Fa-f]:[0-9A-Fa-f]{1,4}:/.test(text),
  },
  { type: 'ipv4', pattern: /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\d.]*\d)/g },
];

/** The PII spans of the wanted types in `text`, disjoint and sorted. */
export function detectPii(text: string, types: ReadonlySet<PiiType>, partial: boolean): Span[] {
  const spans: Span[] = [];
  for (const detector of DETECTORS) {
    if (!types.has(detector.type) || (detector.gate && !detector.gate(text))) continue;
    spans.push(...(detector.find ? detector.find(text, partial) : findSpans(text, detector.pattern, detector.type, partial, detector.accept)));
  }
  return disjoint(spans);
}
