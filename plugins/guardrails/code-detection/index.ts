import { ALLOW, defineGuardrail } from '../../../core/spec/index.js';

export interface CodeDetectionParams {
  /** Code-looking lines needed to call a text code (default 2); a fenced block always counts. */
  minLines?: number;
}

/** A code fence at a line start ( `[ \t]*`, not `\s*`: that would rescan every run of newlines). */
const FENCE = /(?:^|\n)[ \t]*(?:```|~~~)/;
/** Longer lines (minified code, unbroken prose) are not judged: a bound on the work per line; a fence still counts. */
const MAX_LINE = 2000;
/**
 * Lines that look like source code in common languages (keywords, statements, braces, shell prompts),
 * tested on the line without its indentation. Every pattern is linear: no two neighbouring
 * quantifiers can match the same characters (`\w+\b.*`, `\s*(?:\{\s*)?$`, `\s.+\s`).
 */
const CODE_LINE = [
  /^(?:def|class|async def)\s+\w+\b.*:\s*$/,
  /^(?:function\s*\w*\s*\(|(?:const|let|var)\s+\w+\s*=|import\s+[\w{*].*from\s|export\s+(?:default|const|function|class)\b)/,
  /^(?:from\s+[\w.]+\s+import\s|import\s+[\w.]+\s*$|#include\s*[<"]|using\s+[\w.]+;|package\s+[\w.]+;?$)/,
  /^(?:public|private|protected|static)\s+[\w<>[\]]+\s+\w+\s*\(/,
  /^(?:fn|func)\s+\w+\s*\(/,
  /^(?:if|for|while|switch)\s*\(.*\)\s*(?:\{\s*)?$/,
  /^(?:return\b.*;|\}\s*(?:else\b.*)?(?:\{\s*)?$|.*\)\s*\{\s*$|.*;\s*$)/,
  /^(?:SELECT\s.+\sFROM\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+TABLE\s)/i,
  /^(?:\$|#)\s+(?:sudo|npm|pip|git|curl|cd|ls|rm|docker)\s/,
  /^(?:console\.log|print|printf|System\.out\.println)\s*\(/,
];

/** The number of code-looking lines of `text`, or Infinity when it has a code fence. */
export function codeSignals(text: string): number {
  if (FENCE.test(text)) return Number.POSITIVE_INFINITY;
  let count = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trimStart();
    if (line === '' || line.length > MAX_LINE) continue;
    if (CODE_LINE.some((pattern) => pattern.test(line))) count++;
  }
  return count;
}

/** Denies text that contains source code. */
export const codeDetection = defineGuardrail<CodeDetectionParams>(
  {
    id: 'code-detection',
    version: '1.0.0',
    description: 'Denies text that contains source code (code fences, or several lines that look like code).',
    stages: ['input', 'output'],
    incremental: false,
    params: { type: 'object', additionalProperties: false, properties: { minLines: { type: 'integer', minimum: 1 } } },
  },
  (params) => {
    const minLines = params.minLines ?? 2;
    return (input) => (input.texts.some((text) => codeSignals(text) >= minLines) ? { action: 'deny', reason: 'text contains code' } : ALLOW);
  },
);
