import type { VectorRecord } from './store.js';

/** A vector scaled to unit length (so that cosine similarity is a dot product); undefined for a zero or non-finite one. */
export function unit(values: ArrayLike<number>): Float32Array | undefined {
  let sum = 0;
  for (let index = 0; index < values.length; index++) sum += values[index] * values[index];
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) return undefined;
  const scaled = new Float32Array(values.length);
  for (let index = 0; index < values.length; index++) scaled[index] = values[index] / norm;
  return scaled;
}

/** The dot product of two vectors of one length (four lanes at a time: the inner loop of every lookup). */
export function dot(left: Float32Array, right: Float32Array): number {
  return dotRange(left, right, 0, left.length);
}

/** The dot product of `left` and `right` over the dimensions from `start` to `end` (excluded). */
function dotRange(left: Float32Array, right: Float32Array, start: number, end: number): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let index = start;
  for (; index + 3 < end; index += 4) {
    a += left[index] * right[index];
    b += left[index + 1] * right[index + 1];
    c += left[index + 2] * right[index + 2];
    d += left[index + 3] * right[index + 3];
  }
  for (; index < end; index++) a += left[index] * right[index];
  return a + b + c + d;
}

/** Where a lookup checks whether the rest of a vector could still reach the threshold: after 1/16, 1/8, 1/4 and 1/2 of its dimensions. */
function checkpoints(length: number): number[] {
  return [length >> 4, length >> 3, length >> 2, length >> 1].filter((point, index, points) => point > 0 && point !== points[index - 1]);
}

/** The length of what follows each checkpoint of `vector` (its tail's norm). */
function tailNorms(vector: Float32Array, points: readonly number[]): Float32Array {
  const norms = new Float32Array(points.length);
  for (let index = 0; index < points.length; index++) norms[index] = Math.sqrt(Math.max(0, dotRange(vector, vector, points[index], vector.length)));
  return norms;
}

/** Float error allowed for in the bound (a vector is never skipped for a rounding). */
const BOUND_SLACK = 1e-5;

interface Entry {
  readonly record: VectorRecord;
  /** The norms of the vector's tails after each checkpoint ({@link checkpoints}). */
  readonly tails: Float32Array;
  dead: boolean;
}

/** One namespace's vectors: by partition for lookups, in arrival order for the bound. */
class Space {
  /** The id of the last log record applied. */
  cursor?: string;
  readonly partitions = new Map<string, Entry[]>();
  private readonly order: Entry[] = [];
  private head = 0;
  private deadCount = 0;

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.order.length - this.head;
  }

  add(record: VectorRecord): void {
    const entry: Entry = { record, tails: tailNorms(record.vector, checkpoints(record.vector.length)), dead: false };
    this.order.push(entry);
    let list = this.partitions.get(record.partition);
    if (list === undefined) this.partitions.set(record.partition, (list = []));
    list.push(entry);
    while (this.size > this.maxEntries) this.kill(this.order[this.head++]);
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Marks the entries of `ref` dead (its answer is gone). */
  remove(ref: string): void {
    for (let index = this.head; index < this.order.length; index++) if (this.order[index].record.ref === ref) this.kill(this.order[index]);
  }

  private kill(entry: Entry): void {
    if (entry.dead) return;
    entry.dead = true;
    // Dead entries are swept from the partition lists once they are many, not one by one.
    if (++this.deadCount > Math.max(64, this.maxEntries / 4)) this.sweep();
  }

  private sweep(): void {
    for (const [partition, list] of this.partitions) {
      const live = list.filter((entry) => !entry.dead);
      if (live.length === 0) this.partitions.delete(partition);
      else this.partitions.set(partition, live);
    }
    this.deadCount = 0;
  }
}

/** The best semantic candidate of a lookup. */
export interface Candidate {
  readonly ref: string;
  readonly similarity: number;
}

/**
 * The semantic index in memory: per namespace at most `maxEntries` unit vectors (the oldest dropped
 * first), grouped by partition (model, parameters and upstream), searched exhaustively with early
 * exits (see `search`). Exhaustive search is exact (an approximate index could miss the one close
 * answer, or need tuning per model); at the bound (10 000 by default) it takes a few milliseconds
 * (docs/cache.md has the figures). Each namespace is kept in step with its log (`VectorLog`) by
 * whoever owns it.
 */
export class VectorIndex {
  private readonly spaces = new Map<string, Space>();

  constructor(private readonly maxEntries: number) {}

  /** The id of the last record applied to `namespace`, to read the log from. */
  cursor(namespace: string): string | undefined {
    return this.spaces.get(namespace)?.cursor;
  }

  /** Applies records read from the log, oldest first. */
  apply(namespace: string, records: readonly VectorRecord[]): void {
    if (records.length === 0) return;
    const space = this.space(namespace);
    for (const record of records) space.add(record);
    space.cursor = records[records.length - 1].id;
  }

  /**
   * The closest vector of `partition` whose similarity is at least `threshold` and whose guard
   * equals `guard` (a near miss with other numbers or negations never qualifies). Exhaustive and
   * exact, but most vectors are dropped part-way: past each checkpoint, the dot product so far
   * plus the largest the rest can add (the product of the two tails' norms, Cauchy–Schwarz) must
   * still reach the threshold, or the best found so far.
   */
  search(namespace: string, partition: string, vector: Float32Array, threshold: number, guard: string): Candidate | undefined {
    const list = this.spaces.get(namespace)?.partitions.get(partition);
    if (list === undefined) return undefined;
    const points = checkpoints(vector.length);
    const queryTails = tailNorms(vector, points);
    let best: Candidate | undefined;
    let floor = threshold;
    for (const entry of list) {
      const candidate = entry.record.vector;
      if (entry.dead || candidate.length !== vector.length) continue;
      let similarity = 0;
      let start = 0;
      let reachable = true;
      for (let index = 0; index < points.length && reachable; index++) {
        similarity += dotRange(candidate, vector, start, points[index]);
        start = points[index];
        reachable = similarity + queryTails[index] * entry.tails[index] + BOUND_SLACK >= floor;
      }
      if (!reachable) continue;
      similarity += dotRange(candidate, vector, start, vector.length);
      if (similarity >= floor && entry.record.guard === guard && (best === undefined || similarity > best.similarity)) {
        best = { ref: entry.record.ref, similarity };
        floor = similarity;
      }
    }
    return best;
  }

  /** Forgets the vectors of an answer that is gone. */
  remove(namespace: string, ref: string): void {
    this.spaces.get(namespace)?.remove(ref);
  }

  /** Forgets a namespace (every one when undefined). */
  drop(namespace?: string): void {
    if (namespace === undefined) this.spaces.clear();
    else this.spaces.delete(namespace);
  }

  /** Vectors held for `namespace`. */
  size(namespace: string): number {
    return this.spaces.get(namespace)?.size ?? 0;
  }

  private space(namespace: string): Space {
    let space = this.spaces.get(namespace);
    if (space === undefined) this.spaces.set(namespace, (space = new Space(this.maxEntries)));
    return space;
  }
}
