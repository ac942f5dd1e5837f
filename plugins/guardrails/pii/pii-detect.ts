import { isIPv6 } from 'node:net';
import { disjoint, findSpans, type Span } from '../../../core/guardrails/define.js';

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

const digitCount = (text: string) => text.replace(/\D/g, '').length;

/** Detectors in priority order: when spans overlap, the earlier type wins (a card is not a phone). */
const DETECTORS: ReadonlyArray<{ type: PiiType; pattern: RegExp; accept?: (match: string) => boolean | number }> = [
  {
    type: 'secret',
    pattern:
      /\b(?:sk|pk|rk)-(?:[a-z]+-)?[A-Za-z0-9_-]{16,}|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{35}|\bgh[pousr]_[A-Za-z0-9]{36,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|-----BEGIN [A-Z ]*PRIVATE KEY-----/g,
  },
  { type: 'card', pattern: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g, accept: (match) => luhnValid(match.replace(/\D/g, '')) },
  { type: 'iban', pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g, accept: ibanLength },
  { type: 'ssn', pattern: /(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)/g },
  { type: 'email', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}/g },
  {
    type: 'phone',
    // International (+CC …, 8 to 15 digits) or North American national ((555) 123-4567, 555-123-4567).
    pattern: /\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,6}(?!\d)|(?<!\d)\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?!\d)/g,
    accept: (match) => match.startsWith('+') ? digitCount(match) >= 8 && digitCount(match) <= 15 : true,
  },
  { type: 'ipv6', pattern: /(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Fa-f:])/g, accept: (match) => match.length >= 3 && isIPv6(match) },
  { type: 'ipv4', pattern: /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\d.]*\d)/g },
];

/** The PII spans of the wanted types in `text`, disjoint and sorted. */
export function detectPii(text: string, types: ReadonlySet<PiiType>, partial: boolean): Span[] {
  const spans: Span[] = [];
  for (const detector of DETECTORS) {
    if (types.has(detector.type)) spans.push(...findSpans(text, detector.pattern, detector.type, partial, detector.accept));
  }
  return disjoint(spans);
}
