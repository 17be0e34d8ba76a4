/**
 * Follows the end of a table read by increasing id: the inspector's feed keeps one over the
 * history (event ids) and one over the jobs (job ids, for creations, which are not history
 * rows). SQL draws an id at insert and shows the row at commit, so a transaction still open
 * can leave a gap below ids already seen. Gaps are remembered for a while and looked at again;
 * one that never fills (a rolled back insert) is dropped after HOLE_TTL_MS. A tail that falls
 * too far behind (more than MAX_ROUNDS full batches in one poll) skips to the newest row and
 * answers 'reset' rather than every row in between.
 */
const HOLE_TTL_MS = 10_000;
const MAX_HOLES = 1_000;
const MAX_ROUNDS = 4;

/** Rows after `afterId` in id order, at most `limit`; without `afterId`, the newest `limit`. */
export type ReadAfter<Row> = (afterId: string | undefined, limit: number) => Promise<Row[]>;

export class IdTail<Row> {
  readonly #read: ReadAfter<Row>;
  readonly #idOf: (row: Row) => string;
  readonly #batchSize: number;
  /** Highest id seen; null until the first poll found where the table ends. */
  #cursor: bigint | null = null;
  /** Ids below the cursor not seen yet → when the gap was noticed. */
  readonly #holes = new Map<bigint, number>();

  constructor(read: ReadAfter<Row>, idOf: (row: Row) => string, batchSize: number) {
    this.#read = read;
    this.#idOf = idOf;
    this.#batchSize = batchSize;
  }

  /** Forgets where the table ends: the next poll looks it up again, and replays nothing. */
  clear(): void {
    this.#cursor = null;
    this.#holes.clear();
  }

  /** The rows that came since the last poll (late ones included), or 'reset'. */
  async poll(): Promise<Row[] | 'reset'> {
    if (this.#cursor === null) {
      const [newest] = await this.#read(undefined, 1);
      this.#cursor = newest ? BigInt(this.#idOf(newest)) : 0n;
      return [];
    }
    const fresh = [...(await this.#recheckHoles())];
    for (let round = 0; ; round++) {
      const rows = await this.#read(String(this.#cursor), this.#batchSize);
      for (const row of rows) this.#advance(BigInt(this.#idOf(row)));
      fresh.push(...rows);
      if (rows.length < this.#batchSize) return fresh;
      if (round + 1 === MAX_ROUNDS) {
        const [newest] = await this.#read(undefined, 1);
        if (newest) this.#cursor = BigInt(this.#idOf(newest));
        this.#holes.clear();
        return 'reset';
      }
    }
  }

  /** Moves the cursor to `id`, remembering the ids it skipped: the nearest below `id` first,
   *  as those are the ones drawn lately that may still commit; a wide gap's far end (ids of
   *  rows pruned, or never written) is left unwatched once MAX_HOLES are. */
  #advance(id: bigint): void {
    const cursor = this.#cursor!;
    if (id <= cursor) return;
    const now = Date.now();
    for (let missing = id - 1n; missing > cursor && this.#holes.size < MAX_HOLES; missing--) this.#holes.set(missing, now);
    this.#cursor = id;
  }

  /** Rows that filled a gap since the last poll. */
  async #recheckHoles(): Promise<Row[]> {
    const now = Date.now();
    for (const [id, since] of this.#holes) if (now - since > HOLE_TTL_MS) this.#holes.delete(id);
    if (this.#holes.size === 0) return [];
    const lowest = [...this.#holes.keys()].reduce((a, b) => (a < b ? a : b));
    const span = Number(this.#cursor! - lowest) + 1;
    const rows = await this.#read(String(lowest - 1n), Math.min(span, this.#batchSize));
    return rows.filter((row) => this.#holes.delete(BigInt(this.#idOf(row))));
  }
}
