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

  constructor(private readonly texts: readonly string[]) {}

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
    return {
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
