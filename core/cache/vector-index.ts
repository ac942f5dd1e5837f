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
  const length = left.length;
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let index = 0;
  for (; index + 3 < length; index += 4) {
    a += left[index] * right[index];
    b += left[index + 1] * right[index + 1];
    c += left[index + 2] * right[index + 2];
    d += left[index + 3] * right[index + 3];
  }
  for (; index < length; index++) a += left[index] * right[index];
  return a + b + c + d;
}

interface Entry {
  readonly record: VectorRecord;
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
    const entry: Entry = { record, dead: false };
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
 * first), grouped by partition (model, parameters and upstream), searched exhaustively. Exhaustive
 * search is exact, and at the bound (10 000 by default) takes milliseconds (docs/cache.md has the
 * figures); each namespace is kept in step with its log (`VectorLog`) by whoever owns it.
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
   * equals `guard` (a near miss with other numbers or negations never qualifies).
   */
  search(namespace: string, partition: string, vector: Float32Array, threshold: number, guard: string): Candidate | undefined {
    const list = this.spaces.get(namespace)?.partitions.get(partition);
    if (list === undefined) return undefined;
    let best: Candidate | undefined;
    for (const entry of list) {
      if (entry.dead || entry.record.vector.length !== vector.length) continue;
      const similarity = dot(entry.record.vector, vector);
      if (similarity >= threshold && (best === undefined || similarity > best.similarity) && entry.record.guard === guard) best = { ref: entry.record.ref, similarity };
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
