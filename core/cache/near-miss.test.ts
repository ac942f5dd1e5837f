import test from 'ava';
import { nearMissGuard } from './near-miss.js';

test('numbers are kept in order, written as digits or words, thousands separators dropped', (t) => {
  t.is(nearMissGuard('Add 1,000 and 3.5, then 7'), '1000 3.5 7|0');
  t.is(nearMissGuard('add two thousand and three'), '2 1000 3|0');
  t.is(nearMissGuard('which one is the oldest'), '|0', '"one" is as often a pronoun');
  t.not(nearMissGuard('give me one idea'), nearMissGuard('give me two ideas'));
  t.not(nearMissGuard('from 3 to 5'), nearMissGuard('from 5 to 3'));
  t.not(nearMissGuard('What is 17 times 3?'), nearMissGuard('What is 17 times 4?'));
  t.not(nearMissGuard('the second paragraph'), nearMissGuard('the third paragraph'));
});

test('negations are counted, contractions and curly apostrophes included', (t) => {
  t.is(nearMissGuard('Is it safe?'), '|0');
  t.is(nearMissGuard('Is it not safe?'), '|1');
  t.is(nearMissGuard('It isn’t safe, never'), '|2');
  t.is(nearMissGuard("Don't translate it without a reason"), '|2');
  t.not(nearMissGuard('Do translate this sentence'), nearMissGuard('Do not translate this sentence'));
});

test('texts that differ only in case, punctuation and wording of the same facts share a guard', (t) => {
  t.is(nearMissGuard('Please tell me the capital of France.'), nearMissGuard('tell me, please, the CAPITAL of france'));
  t.is(nearMissGuard('Give me 3 ideas'), nearMissGuard('Could you give me three ideas?'));
});
