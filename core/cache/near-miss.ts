/**
 * What two texts must share, beyond a close meaning, for one's answer to serve the other. Embedding
 * models place "What is 17 × 3?" next to "What is 17 × 4?" and "Is it safe to …" next to "Is it not
 * safe to …": a wrong hit is worse than a miss, so a semantic hit also needs the same numbers in the
 * same order and the same count of negations.
 */
export function nearMissGuard(text: string): string {
  const numbers: string[] = [];
  let negations = 0;
  for (const match of text.toLowerCase().matchAll(TOKEN)) {
    const [token] = match;
    if (/^\d/.test(token)) numbers.push(token.replace(/,(?=\d{3}\b)/g, ''));
    else if (NUMBER_WORDS.has(token)) numbers.push(NUMBER_WORDS.get(token)!);
    else if (NEGATIONS.has(token) || /n['’]t$/.test(token)) negations++;
  }
  return `${numbers.join(' ')}|${negations}`;
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
