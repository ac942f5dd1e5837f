import test from 'ava';
import { namedEntities, nearMissGuard } from './near-miss.js';

test('numbers are kept in order, written as digits or words, thousands separators dropped', (t) => {
  t.is(nearMissGuard('sum 1,000 and 3.5, then 7'), '1000 3.5 7|0||');
  t.is(nearMissGuard('sum two thousand and three'), '2 1000 3|0||');
  t.is(nearMissGuard('which one is the tallest'), '|0||', '"one" is as often a pronoun');
  t.not(nearMissGuard('give me one idea'), nearMissGuard('give me two ideas'));
  t.not(nearMissGuard('from 3 to 5'), nearMissGuard('from 5 to 3'));
  t.not(nearMissGuard('What is 17 times 3?'), nearMissGuard('What is 17 times 4?'));
  t.not(nearMissGuard('the second paragraph'), nearMissGuard('the third paragraph'));
});

test('negations are counted, contractions and curly apostrophes included', (t) => {
  t.is(nearMissGuard('Is it fine?'), '|0||');
  t.is(nearMissGuard('Is it not fine?'), '|1||');
  t.is(nearMissGuard('It isn’t fine, never'), '|2||');
  t.is(nearMissGuard("Don't translate it without a reason"), '|2||');
  t.not(nearMissGuard('Do translate this sentence'), nearMissGuard('Do not translate this sentence'));
});

test('texts that differ only in case, punctuation and wording of the same facts share a guard', (t) => {
  t.is(nearMissGuard('Please tell me the capital of France.'), nearMissGuard('tell me, please, the CAPITAL of France'));
  t.is(nearMissGuard('Give me 3 ideas'), nearMissGuard('Could you give me three ideas?'));
  t.is(nearMissGuard('user: Summarise the report for Alice. What changed?'), nearMissGuard('user: what changed? summarise the report for Alice!'));
});

test('named entities: a changed proper name is another question (issue 31: "Alice"/"Mallory")', (t) => {
  t.not(nearMissGuard('How much does Alice owe the bank?'), nearMissGuard('How much does Mallory owe the bank?'));
  t.not(nearMissGuard('Alice owes the bank money: how much?'), nearMissGuard('Mallory owes the bank money: how much?'), 'a name opening the text counts too');
  t.not(nearMissGuard('user: Alice sent the key to Bob'), nearMissGuard('user: Bob sent the key to Alice'), 'in order');
  t.not(nearMissGuard('Summarise what NASA announced'), nearMissGuard('Summarise what ESA announced'), 'acronyms');
  t.not(nearMissGuard('Plan a trip to Paris in spring'), nearMissGuard('Plan a trip to Rome in spring'));
  t.not(nearMissGuard('Review my iPhone app'), nearMissGuard('Review my Android app'));
  t.is(nearMissGuard('How much does Alice owe the bank?'), nearMissGuard('how much does ALICE owe the bank'), 'compared in lower case');
  t.deepEqual(namedEntities('user: What is the capital of France? I think Lyon. Please check with Dr. Smith'), ['france', 'lyon', 'dr', 'smith']);
  t.deepEqual(namedEntities('What did I say? THIS IS IMPORTANT.'), [], 'shouted words, "I" and openers are no entities');
});

test('antonym pairs: a text that swaps a word for its opposite is another question (issue 31: "true"/"false")', (t) => {
  t.not(nearMissGuard('Is the following statement true: the moon is made of rock'), nearMissGuard('Is the following statement false: the moon is made of rock'));
  t.not(nearMissGuard('List the files to include in the build'), nearMissGuard('List the files to exclude in the build'));
  t.not(nearMissGuard('Sort the rows in ascending order'), nearMissGuard('Sort the rows in descending order'));
  t.not(nearMissGuard('Should the firewall allow this port?'), nearMissGuard('Should the firewall deny this port?'));
  t.not(nearMissGuard('What happened before the merger?'), nearMissGuard('What happened after the merger?'));
  t.not(nearMissGuard('Find the highest value'), nearMissGuard('Find the lowest value'));
  t.not(nearMissGuard('Is it safe to run this?'), nearMissGuard('Is it dangerous to run this?'));
  t.is(nearMissGuard('true or false: water boils at sea level'), nearMissGuard('water boils at sea level, false or true?'), 'the same words of a pair in another order');
});
