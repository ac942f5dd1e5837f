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
