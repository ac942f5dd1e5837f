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
}

const PREVIOUS = '(?:all\\s+|any\\s+|the\\s+|your\\s+|these\\s+|those\\s+)*(?:previous|prior|above|earlier|preceding|original|initial|system)';
const RULES = '(?:instructions?|prompts?|rules|directions|directives|guidelines|commands|context|messages?)';

export const SIGNALS: readonly Signal[] = [
  { name: 'override', weight: 3, pattern: new RegExp(`\\b(?:ignore|disregard|forget|skip|override|bypass|drop)\\s+${PREVIOUS}\\s+${RULES}`, 'i') },
  { name: 'override-everything', weight: 3, pattern: /\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:you(?:'ve| have)?\s+(?:been\s+told|learned)|(?:that\s+)?(?:was\s+)?(?:said|written)\s+(?:before|above))/i },
  { name: 'new-instructions', weight: 2, pattern: /\b(?:new|updated|real|actual|true)\s+(?:instructions|rules|system\s+prompt)\s*(?::|are\b|follow\b)/i },
  { name: 'extract-prompt', weight: 3, pattern: /\b(?:reveal|show|print|repeat|output|tell\s+me|give\s+me|what\s+(?:is|are|was|were))\s+(?:me\s+)?(?:your|the)\s+(?:(?:full|entire|exact|original|hidden|secret|initial)\s+)*(?:system\s+prompt|system\s+message|instructions|initial\s+prompt|hidden\s+prompt|prompt\s+above)/i },
  { name: 'role-hijack', weight: 2, pattern: /\b(?:you\s+are\s+now|from\s+now\s+on,?\s+you\s+(?:are|will)|pretend\s+(?:to\s+be|you\s+are)|act\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|DAN\b))/i },
  { name: 'jailbreak-persona', weight: 3, pattern: /\b(?:DAN|do\s+anything\s+now|developer\s+mode|jailbreak(?:ed)?|god\s+mode)\b/i },
  { name: 'no-restrictions', weight: 1, pattern: /\b(?:without\s+(?:any\s+)?(?:restrictions|filters|censorship|limitations|rules)|no\s+(?:restrictions|filters|rules|limits)\s+apply|not\s+bound\s+by)\b/i },
  { name: 'role-marker', weight: 2, pattern: /(?:^|\n)\s*(?:#{1,3}\s*)?(?:system|assistant)\s*(?::|\]|>)|\[\/?(?:system|INST)\]|<\|(?:im_start|im_end|system|endoftext)\|>|<\/?system>/i },
  { name: 'fake-section', weight: 2, pattern: /(?:^|\n)\s*(?:-{3,}|={3,}|#{2,})\s*(?:end\s+of\s+(?:prompt|instructions|system)|begin\s+(?:new\s+)?(?:instructions|system))/i },
  { name: 'obfuscation', weight: 1, pattern: /\b(?:decode|base64|rot13)\b[\s\S]{0,80}\b(?:and\s+(?:then\s+)?(?:follow|execute|run|obey))/i },
  { name: 'stop-being', weight: 2, pattern: /\b(?:stop\s+being|you\s+(?:are\s+)?no\s+longer)\s+(?:an?\s+)?(?:AI|assistant|language\s+model|helpful|bound)/i },
];

/** The score of a text and the names of the signals it shows. */
export function injectionScore(text: string): { score: number; signals: string[] } {
  let score = 0;
  const signals: string[] = [];
  for (const signal of SIGNALS) {
    if (signal.pattern.test(text)) {
      score += signal.weight;
      signals.push(signal.name);
    }
  }
  return { score, signals };
}
