import { ALLOW, defineGuardrail } from '../../../core/guardrails/define.js';

export interface CodeDetectionParams {
  /** Code-looking lines needed to call a text code (default 2); a fenced block always counts. */
  minLines?: number;
}

const FENCE = /(^|\n)\s*(```|~~~)/;
/** Lines that look like source code in common languages (keywords, statements, braces, shell prompts). */
const CODE_LINE = [
  /^\s*(?:def|class|async def)\s+\w+.*:\s*$/,
  /^\s*(?:function\s*\w*\s*\(|(?:const|let|var)\s+\w+\s*=|import\s+[\w{*].*from\s|export\s+(?:default|const|function|class)\b)/,
  /^\s*(?:from\s+[\w.]+\s+import\s|import\s+[\w.]+\s*$|#include\s*[<"]|using\s+[\w.]+;|package\s+[\w.]+;?$)/,
  /^\s*(?:public|private|protected|static)\s+[\w<>[\]]+\s+\w+\s*\(/,
  /^\s*(?:fn|func)\s+\w+\s*\(/,
  /^\s*(?:if|for|while|switch)\s*\(.*\)\s*\{?\s*$/,
  /^\s*(?:return\b.*;|\}\s*(?:else\b.*)?\{?\s*$|.*\)\s*\{\s*$|.*;\s*$)/,
  /^\s*(?:SELECT\s+.+\s+FROM\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+TABLE\s)/i,
  /^\s*(?:\$|#)\s+(?:sudo|npm|pip|git|curl|cd|ls|rm|docker)\s/,
  /^\s*(?:console\.log|print|printf|System\.out\.println)\s*\(/,
];

/** The number of code-looking lines of `text`, or Infinity when it has a code fence. */
export function codeSignals(text: string): number {
  if (FENCE.test(text)) return Number.POSITIVE_INFINITY;
  let count = 0;
  for (const line of text.split('\n')) if (CODE_LINE.some((pattern) => pattern.test(line))) count++;
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
