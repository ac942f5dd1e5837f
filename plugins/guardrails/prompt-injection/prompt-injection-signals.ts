/**
 * The heuristic's signals, each with a weight. Phrase signals catch the wording of instruction
 * overrides, role hijacks and prompt extraction; structure signals catch text that imitates the
 * chat format (role markers, special tokens, fake system sections). A text's score is the sum of
 * the weights of the signals it shows (each counted once).
 */
export interface Signal {
  readonly name: string;
  readonly weight: number;
  readonly pattern: RegExp;
  /**
   * A cheap gate on the hot path: the pattern runs only when the text has one of these words
   * (lower case) or one of these markers (exact substrings).
   */
  readonly words?: readonly string[];
  readonly markers?: readonly string[];
}

/** The lower-case words (letters, digits, apostrophes) of a text, in one pass. */
export function wordsOf(text: string): Set<string> {
  const lower = text.toLowerCase();
  const words = new Set<string>();
  let start = -1;
  for (let index = 0; index <= lower.length; index++) {
    const code = index < lower.length ? lower.charCodeAt(index) : 32;
    const inWord = (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 39;
    if (inWord) {
      if (start < 0) start = index;
    } else if (start >= 0) {
      words.add(lower.slice(start, index));
      start = -1;
    }
  }
  return words;
}

const PREVIOUS = '(?:all\\s+|any\\s+|the\\s+|your\\s+|these\\s+|those\\s+)*(?:previous|prior|above|earlier|preceding|original|initial|system)';
const RULES = '(?:instructions?|prompts?|rules|directions|directives|guidelines|commands|context|messages?)';

/** `[ \t]*` after a line start, not `\s*`: that rescans every run of newlines (quadratic). */
const ROLE_LINE = /(?:^|\n)[ \t]*(?:#{1,3}\s*)?(?:system|assistant|developer)\s*(?::|\]|>)/gi;

export const SIGNALS: readonly Signal[] = [
  { name: 'override', words: ['ignore', 'disregard', 'forget', 'skip', 'override', 'bypass', 'drop'], weight: 3, pattern: new RegExp(`\\b(?:ignore|disregard|forget|skip|override|bypass|drop)\\s+${PREVIOUS}\\s+${RULES}`, 'i') },
  {
    name: 'override-everything', words: ['ignore', 'disregard', 'forget'],
    weight: 3,
    pattern:
      /\b(?:ignore|disregard|forget)\s+(?:(?:everything|all)\s+(?:you(?:'ve| have| were| have been|'ve been)?\s+(?:been\s+)?(?:told|taught|learned)|(?:that\s+)?(?:was\s+)?(?:said|written)\s+(?:before|above))|(?:the|your|all)\s+(?:rules|instructions|guidelines)\s+you\s+(?:had|have|were\s+given|got))/i,
  },
  { name: 'new-instructions', words: ['instructions', 'rules', 'prompt'], weight: 2, pattern: /\b(?:new|updated|real|actual|true)\s+(?:instructions|rules|system\s+prompt)\s*(?::|are\b|follow\b)/i },
  {
    name: 'extract-prompt', words: ['prompt', 'instructions', 'message'],
    weight: 3,
    pattern:
      /\b(?:reveal|show|print|repeat|output|tell\s+me|give\s+me|what\s+(?:is|are|was|were))\s+(?:me\s+)?(?:(?:your|the)\s+(?:(?:full|entire|exact|original|hidden|secret|initial)\s+)*(?:system\s+prompt|system\s+message|initial\s+prompt|hidden\s+(?:prompt|instructions)|prompt\s+above)|your\s+(?:(?:full|entire|exact|original|hidden|secret|initial)\s+)*instructions)/i,
  },
  {
    name: 'role-hijack', words: ['now', 'pretend', 'act'],
    weight: 2,
    pattern:
      /\b(?:you\s+are\s+now|from\s+now\s+on,?\s+you\s+(?:are|will)|pretend\s+(?:to\s+be|you\s+are)|act\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|DAN\b))/i,
  },
  { name: 'jailbreak-persona', words: ['anything', 'developer', 'jailbreak', 'jailbreaked', 'god'], weight: 3, pattern: /\b(?:do\s+anything\s+now|developer\s+mode|jailbreak(?:ed)?|god\s+mode)\b/i },
  // Upper case only: "Dan" is a name.
  { name: 'dan-persona', markers: ['DAN'], weight: 3, pattern: /\bDAN\b/ },
  {
    name: 'no-restrictions', words: ['restrictions', 'filters', 'censorship', 'limitations', 'rules', 'limits', 'bound', 'unrestricted', 'uncensored'],
    weight: 1,
    pattern: /\b(?:without\s+(?:any\s+)?(?:restrictions|filters|censorship|limitations|rules)|(?:with\s+)?no\s+(?:restrictions|filters|rules|limits)|(?:not|no\s+longer)\s+bound\s+by|unrestricted|uncensored)\b/i,
  },
  { name: 'special-token', markers: ['<|', '[', '<<', 'system>'], weight: 3, pattern: /<\|(?:im_start|im_end|system|endoftext|eot_id)\|>|\[\/?(?:system|INST|SYS)\]|<\/?system>|<<SYS>>/i },
  { name: 'role-marker', words: ['system', 'assistant', 'developer'], weight: 2, pattern: new RegExp(ROLE_LINE.source, 'i') },
  { name: 'fake-section', markers: ['---', '===', '##'], weight: 2, pattern: /(?:^|\n)[ \t]*(?:-{3,}|={3,}|#{2,})\s*(?:end\s+of\s+(?:prompt|instructions|system)|begin\s+(?:new\s+)?(?:instructions|system))/i },
  { name: 'obfuscation', words: ['decode', 'base64', 'rot13'], weight: 3, pattern: /\b(?:decode|base64|rot13)\b[\s\S]{0,80}\b(?:and\s+(?:then\s+)?(?:follow|execute|run|obey))/i },
  { name: 'stop-being', words: ['stop', 'longer'], weight: 2, pattern: /\b(?:stop\s+being|you\s+(?:are\s+)?no\s+longer)\s+(?:an?\s+)?(?:AI|assistant|language\s+model|helpful|bound)/i },
  { name: 'exfiltrate', words: ['reveal', 'leak', 'exfiltrate', 'dump'], weight: 1, pattern: /\b(?:reveal|leak|exfiltrate|dump)\s+(?:\w+\s+){0,3}(?:secret|password|key|credentials|confidential|data|notes)\b/i },
];

/** Two or more lines that open like a chat turn (`system:`, `assistant:`): a transcript being forged. */
const forgedTranscript = (text: string): boolean => (text.match(ROLE_LINE)?.length ?? 0) >= 2;

/** The score of a text and the names of the signals it shows. */
export function injectionScore(text: string): { score: number; signals: string[] } {
  let score = 0;
  const signals: string[] = [];
  const words = wordsOf(text);
  for (const signal of SIGNALS) {
    const gated = signal.words?.some((word) => words.has(word)) || signal.markers?.some((marker) => text.includes(marker));
    if (!gated) continue;
    if (signal.pattern.test(text)) {
      score += signal.weight;
      signals.push(signal.name);
    }
  }
  if (signals.includes('role-marker') && forgedTranscript(text)) {
    score += 2;
    signals.push('forged-transcript');
  }
  return { score, signals };
}
