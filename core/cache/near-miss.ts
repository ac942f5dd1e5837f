/**
 * What two texts must share, beyond a close meaning, for one's answer to serve the other. Embedding
 * models place "What is 17 × 3?" next to "What is 17 × 4?", "Is it safe to …" next to "Is it not
 * safe to …", "Is the claim true?" next to "Is the claim false?" and "Alice owes Bob" next to
 * "Mallory owes Bob": a wrong hit is worse than a miss, so a semantic hit also needs
 *
 * - the same numbers in the same order, and the same count of negations;
 * - the same named entities in the same order: capitalised words that do not merely open a
 *   sentence (`Alice`, `Paris`, `iPhone`), acronyms of 2 to 5 capitals (`NASA`), and a capitalised
 *   word opening a sentence unless it is a common opener (`What`, `Please`, `Summarise`, …),
 *   compared in lower case;
 * - the same words of each listed antonym pair (`true`/`false`, `before`/`after`, `allow`/`deny`,
 *   `increase`/`decrease`, …), in any order.
 *
 * The guard is a string: two texts pass when their guards are equal. Classes left (docs/cache.md):
 * an antonym not in the list, a lower-case name (`alice`), a name opening a sentence that is
 * also a common opener (`Will`, `May`).
 */
export function nearMissGuard(text: string): string {
  const numbers: string[] = [];
  let negations = 0;
  const polarities: string[] = [];
  for (const match of text.toLowerCase().matchAll(TOKEN)) {
    const [token] = match;
    if (/^\d/.test(token)) numbers.push(token.replace(/,(?=\d{3}\b)/g, ''));
    else if (NUMBER_WORDS.has(token)) numbers.push(NUMBER_WORDS.get(token)!);
    else if (NEGATIONS.has(token) || /n['’]t$/.test(token)) negations++;
    else if (POLARITY.has(token)) polarities.push(POLARITY.get(token)!);
  }
  return `${numbers.join(' ')}|${negations}|${namedEntities(text).join(' ')}|${polarities.sort().join(' ')}`;
}

/** Words in any script, with inner apostrophes, dots or hyphens (`O'Brien`, `U.S`, `Jean-Luc`). */
const WORD = /[\p{L}\p{N}]+(?:['’.-][\p{L}\p{N}]+)*/gu;
const UPPER = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;

/**
 * The named entities of a text, in lower case and in order: see {@link nearMissGuard}. A word opens
 * a sentence when it is the text's first, a line's first (or follows a line's `role:` prefix, as
 * chat messages are embedded), or follows `.`, `!` or `?`.
 */
export function namedEntities(text: string): string[] {
  const words: Array<{ word: string; opens: boolean; shouted: boolean }> = [];
  let previousEnd = 0;
  let lineStart = true;
  for (const match of text.matchAll(WORD)) {
    const [word] = match;
    const gap = text.slice(previousEnd, match.index);
    previousEnd = match.index + word.length;
    const newLine = match.index === 0 || gap.includes('\n');
    words.push({ word, opens: newLine || /[.!?]/.test(gap) || (lineStart && /^\s*:/.test(gap)), shouted: UPPER.test(word) && !LOWER.test(word) && word.replace(/[^\p{L}]/gu, '').length >= 2 });
    lineStart = newLine;
  }
  const entities: string[] = [];
  words.forEach(({ word, opens, shouted }, index) => {
    if (!UPPER.test(word) || /^\p{N}/u.test(word) || word === 'I' || /^I['’]/.test(word)) return;
    const lower = word.toLowerCase().replace(/’/g, "'");
    if (shouted) {
      // An acronym stands alone; a run of capitals is shouting, a long word in capitals emphasis.
      const run = words[index - 1]?.shouted === true || words[index + 1]?.shouted === true;
      if (run || word.replace(/[^\p{L}]/gu, '').length > 5) return;
    } else if (!LOWER.test(word)) return; // one capital letter alone ("A", "B." of a list)
    else if (opens && COMMON_OPENERS.has(lower)) return;
    entities.push(lower);
  });
  return entities;
}

/** Numbers (`1,000`, `3.14`), and words with apostrophes (`don't`, `isn’t`). */
const TOKEN = /\d+(?:[.,]\d+)*|[a-z]+(?:['’][a-z]+)?/g;

const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'nobody', 'nothing', 'neither', 'nor', 'nowhere', 'without', 'cannot', 'cant', 'dont', 'doesnt', 'isnt', 'wont']);

/** Number words, as digits (`one` left out: it is as often a pronoun, "the oldest one"; "one" against "two" still differs). */
const NUMBER_WORDS = new Map(
  [
    'zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty',
    'first second third fourth fifth sixth seventh eighth ninth tenth',
  ]
    .flatMap((line, group) => line.split(' ').map((word, index): [string, string] => [word, group === 0 ? String(index) : `#${index + 1}`]))
    .filter(([word]) => word !== '_')
    .concat(
      ['thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'].map((word, index): [string, string] => [word, String((index + 3) * 10)]),
      [
        ['hundred', '100'],
        ['thousand', '1000'],
        ['million', '1000000'],
        ['billion', '1000000000'],
        ['half', '1/2'],
        ['double', 'x2'],
        ['twice', 'x2'],
        ['triple', 'x3'],
      ],
    ),
);

/**
 * Antonym pairs, as `word/word` groups (a word's inflections listed beside it): a text's words of
 * these become polarity marks (the pair and its side), which must be the same for a hit.
 */
const PAIRS = [
  'true/false', 'correct/incorrect', 'wrong,wrongly/rightly', 'valid/invalid', 'legal/illegal', 'possible/impossible', 'likely/unlikely', 'safe,safer,safest/unsafe,dangerous',
  'allow,allows,allowed,allowing/deny,denies,denied,denying,forbid,forbids,forbidden', 'accept,accepts,accepted/reject,rejects,rejected', 'agree,agrees,agreed/disagree,disagrees,disagreed',
  'enable,enables,enabled/disable,disables,disabled', 'include,includes,included,including/exclude,excludes,excluded,excluding', 'add,adds,added,adding/remove,removes,removed,removing',
  'increase,increases,increased,increasing/decrease,decreases,decreased,decreasing', 'raise,raises,raised/lowers,lowered', 'more/less,fewer', 'most/least',
  'maximum,max,maximise,maximize/minimum,min,minimise,minimize', 'before/after', 'above/below', 'inside/outside', 'internal/external', 'earliest/latest',
  'best/worst', 'better/worse', 'largest,biggest/smallest', 'larger,bigger/smaller', 'highest/lowest', 'higher/lower', 'longest/shortest', 'longer/shorter', 'fastest/slowest', 'faster/slower',
  'cheapest/dearest', 'cheaper/dearer', 'oldest/newest,youngest', 'older/newer,younger', 'open,opens,opened/close,closes,closed,shut', 'start,starts,started/stop,stops,stopped',
  'buy,buys,bought,buying/sell,sells,sold,selling', 'win,wins,won,winning/lose,loses,lost,losing', 'profit,profits/loss,losses',
  'success,succeed,succeeded,successful/failure,fail,fails,failed,unsuccessful', 'positive/negative', 'plus/minus', 'import,imports,imported/export,exports,exported',
  'encrypt,encrypts,encrypted,encryption/decrypt,decrypts,decrypted,decryption', 'compress,compressed,compression/decompress,decompressed,decompression',
  'encode,encoded,encoding/decode,decoded,decoding', 'ascending/descending', 'uppercase/lowercase', 'horizontal/vertical', 'odd/even', 'hot,hotter,hottest/cold,colder,coldest',
  'warm,warmer/cool,cooler', 'north,northern/south,southern', 'east,eastern/west,western', 'push,pushes,pushed/pull,pulls,pulled', 'always/sometimes', 'same/different',
  'male/female', 'men,man/women,woman', 'boy,boys/girl,girls', 'synchronous/asynchronous', 'online/offline', 'pros/cons', 'advantages/disadvantages', 'strengths/weaknesses',
  'yesterday/tomorrow', 'love,loves,loved/hate,hates,hated', 'formal/informal', 'optimistic/pessimistic', 'friendly/hostile',
];
const POLARITY = new Map<string, string>();
PAIRS.forEach((pair, index) =>
  pair.split('/').forEach((side, sideIndex) => {
    for (const word of side.split(',')) if (!POLARITY.has(word)) POLARITY.set(word, `${index}${sideIndex === 0 ? '+' : '-'}`);
  }),
);

/** Capitalised only because they open a sentence: question words, pronouns, articles, common verbs of requests. */
const COMMON_OPENERS = new Set(
  `a an the this that these those there here it its he she they we you your our my his her their them me us one some any all each every no not
  what which who whom whose why how when where whether if then so but and or nor yet also now well ok okay yes hi hello hey dear thanks thank please
  is are was were be been am do does did can could will would shall should may might must has have had let lets let's
  give tell write explain summarise summarize summarize list make create show find describe compare translate rewrite correct fix answer help check
  suggest name define calculate compute convert generate draft plan imagine consider assume suppose note remember say act use keep add remove put take
  read look see think try return print count sort choose pick provide include only just even still however therefore thus also again first next finally
  don't doesn't didn't can't won't isn't aren't wasn't i'm it's what's let's that's there's here's who's how's where's you're we're they're
  after before during while since until because although though as at by for from in into of on onto to with without about above below between under over
  today tomorrow yesterday`.split(/\s+/),
);
