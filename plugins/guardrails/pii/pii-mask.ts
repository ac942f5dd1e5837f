import type { Restorer } from '../../../core/spec/index.js';

/** A placeholder as issued (`<EMAIL_1>`), in a text the model wrote. */
const PLACEHOLDER = /<[A-Z][A-Z0-9]*_\d+>/g;
/** What may still grow into a placeholder at the end of a text: `<`, `<EMA`, `<EMAIL_`, `<EMAIL_12`. */
const PLACEHOLDER_START = /<(?:[A-Z][A-Z0-9]*(?:_\d*)?)?$/;
/** Longer than any placeholder issued: a `<` this far back cannot start one. */
const LONGEST = 24;

/**
 * The placeholders of one request: the same value gets the same placeholder in every text
 * (`<EMAIL_1>`, `<PHONE_2>`), numbered per type in the order they are met. A number already written
 * in the request (a user typing `<EMAIL_1>` literally) is skipped, so that restoring never turns
 * the user's own text into a value. The values stay in this object: the request's memory only.
 */
export class PiiMask {
  private readonly byValue = new Map<string, string>();
  private readonly byPlaceholder = new Map<string, string>();
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly texts: readonly string[],
    /** The mapping an earlier turn of the conversation carried ({@link PiiMask.carry}): its placeholders are kept and counted on. */
    carried?: string,
  ) {
    if (carried === undefined) return;
    for (const [placeholder, value] of parseCarried(carried)) {
      this.byPlaceholder.set(placeholder, value);
      this.byValue.set(value, placeholder);
      const match = /^<([A-Z][A-Z0-9]*)_(\d+)>$/.exec(placeholder);
      if (match) this.counts.set(match[1], Math.max(this.counts.get(match[1]) ?? 0, Number(match[2])));
    }
  }

  /** Every value this mask holds (carried and new): what the log must mask in an answer it restores. */
  values(): string[] {
    return [...this.byValue.keys()];
  }

  /** The placeholder of `value`, a `kind` of PII. */
  placeholder(value: string, kind: string): string {
    const known = this.byValue.get(value);
    if (known) return known;
    const type = kind.toUpperCase();
    let count = this.counts.get(type) ?? 0;
    let placeholder: string;
    do placeholder = `<${type}_${++count}>`;
    while (this.texts.some((text) => text.includes(placeholder)));
    this.counts.set(type, count);
    this.byValue.set(value, placeholder);
    this.byPlaceholder.set(placeholder, value);
    return placeholder;
  }

  /** Puts back the values of the placeholders this request issued; any other stays as written. */
  restorer(): Restorer {
    const values = this.byPlaceholder;
    // Longest values first, so that a value containing another is replaced whole.
    let concealing: Array<[value: string, placeholder: string]> | undefined;
    const conceal = (text: string, json: boolean): string => {
      concealing ??= [...this.byValue].sort(([left], [right]) => right.length - left.length);
      let concealed = text;
      for (const [value, placeholder] of concealing) {
        const written = json ? JSON.stringify(value).slice(1, -1) : value;
        if (concealed.includes(written)) concealed = concealed.replaceAll(written, placeholder);
      }
      return concealed;
    };
    return {
      carry: () => JSON.stringify([...values]),
      conceal,
      restore: (text, json) =>
        text.replace(PLACEHOLDER, (placeholder) => {
          const value = values.get(placeholder);
          if (value === undefined) return placeholder;
          return json ? JSON.stringify(value).slice(1, -1) : value;
        }),
      heldFrom(text) {
        const start = text.lastIndexOf('<');
        if (start === -1 || text.length - start >= LONGEST) return text.length;
        return PLACEHOLDER_START.test(text.slice(start)) ? start : text.length;
      },
    };
  }
}

/** A carried mapping's pairs; anything else (a tampered or foreign value) carries nothing. */
function parseCarried(carried: string): Array<[string, string]> {
  try {
    const pairs: unknown = JSON.parse(carried);
    if (!Array.isArray(pairs)) return [];
    return pairs.filter((pair): pair is [string, string] => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string' && /^<[A-Z][A-Z0-9]*_\d+>$/.test(pair[0]));
  } catch {
    return [];
  }
}
