import test from 'ava';
import type { VectorRecord } from './store.js';
import { dot, unit, VectorIndex } from './vector-index.js';

let ids = 0;
const record = (partition: string, ref: string, values: number[], guard = '|0'): VectorRecord => ({ id: String(++ids), partition, ref, guard, vector: unit(values)! });

test('unit scales to length 1 and refuses a zero vector; dot is the cosine of unit vectors', (t) => {
  const vector = unit([3, 4, 0, 0, 0])!;
  t.is(Math.round(dot(vector, vector) * 1e6) / 1e6, 1);
  t.is(unit([0, 0, 0]), undefined);
  t.is(Math.round(dot(unit([1, 0])!, unit([1, 1])!) * 1e6) / 1e6, Math.round(Math.SQRT1_2 * 1e6) / 1e6);
});

test('search finds the closest vector of the partition above the threshold with the same guard', (t) => {
  const index = new VectorIndex(100);
  index.apply('ns', [record('p', 'close', [1, 0.1, 0]), record('p', 'closer', [1, 0.01, 0]), record('q', 'other partition', [1, 0, 0]), record('p', 'other guard', [1, 0, 0], '1|0')]);
  const query = unit([1, 0, 0])!;
  t.is(index.search('ns', 'p', query, 0.95, '|0')?.ref, 'closer');
  t.is(index.search('ns', 'p', query, 0.99999, '|0'), undefined);
  t.is(index.search('ns', 'r', query, 0.5, '|0'), undefined);
  t.is(index.search('other', 'p', query, 0.5, '|0'), undefined);
  t.is(index.cursor('ns'), String(ids));
});

test('a namespace keeps its newest maxEntries vectors; removed and dropped ones are not found', (t) => {
  const index = new VectorIndex(3);
  const records = Array.from({ length: 5 }, (_, position) => record('p', `r${position}`, [1, position, 0]));
  index.apply('ns', records);
  t.is(index.size('ns'), 3);
  t.is(index.search('ns', 'p', unit([1, 0, 0])!, 0.999, '|0'), undefined, 'r0 was dropped');
  t.is(index.search('ns', 'p', unit([1, 4, 0])!, 0.999, '|0')?.ref, 'r4');
  index.remove('ns', 'r4');
  t.is(index.search('ns', 'p', unit([1, 4, 0])!, 0.999, '|0'), undefined);
  index.drop('ns');
  t.is(index.size('ns'), 0);
});

test('the early exits never change the answer: the exhaustive search finds the same best match over random vectors', (t) => {
  let seed = 7;
  const random = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32) - 0.5;
  const dimensions = 96;
  const index = new VectorIndex(2000);
  const vectors = Array.from({ length: 2000 }, () => unit(Array.from({ length: dimensions }, random))!);
  index.apply('ns', vectors.map((vector, position) => ({ id: String(position), partition: 'p', ref: `r${position}`, guard: position % 7 === 0 ? '1|0' : '|0', vector })));
  let found = 0;
  for (let query = 0; query < 50; query++) {
    // A query near a random stored vector (so that some pass the threshold), compared with a plain scan.
    const near = vectors[(query * 37) % vectors.length];
    const vector = unit(Array.from(near, (value) => value + random() * 0.05))!;
    let expected: { ref: string; similarity: number } | undefined;
    vectors.forEach((stored, position) => {
      const similarity = dot(stored, vector);
      if (similarity >= 0.9 && position % 7 !== 0 && (expected === undefined || similarity > expected.similarity)) expected = { ref: `r${position}`, similarity };
    });
    t.is(index.search('ns', 'p', vector, 0.9, '|0')?.ref, expected?.ref);
    if (expected) found++;
  }
  t.true(found >= 30, `${found} of 50 queries had a match`);
});
