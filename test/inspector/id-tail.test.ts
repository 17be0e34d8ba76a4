import { expect, it } from 'vitest';
import { IdTail } from '../../src/inspector/id-tail.js';

/** A table whose rows become visible when the test says, as commits do. */
function table() {
  const rows = new Set<number>();
  const read = async (afterId: string | undefined, limit: number) => {
    const sorted = [...rows].sort((a, b) => a - b).map((id) => ({ id: String(id) }));
    return afterId === undefined ? sorted.slice(-limit) : sorted.filter((row) => Number(row.id) > Number(afterId)).slice(0, limit);
  };
  return { tail: new IdTail(read, (row) => row.id, 100), commit: (...ids: number[]) => ids.forEach((id) => rows.add(id)) };
}

const ids = (rows: { id: string }[] | 'reset') => (rows === 'reset' ? rows : rows.map((row) => Number(row.id)));

it('a row that commits late just below a wide gap (the newest rows pruned before the tail started) is still found', async () => {
  const { tail, commit } = table();
  commit(1, 2, 5);
  expect(ids(await tail.poll())).toEqual([]);
  // Ids 6-2,998 were pruned (or never written); 2,999 was drawn before 3,000 and commits after it.
  commit(3_000);
  expect(ids(await tail.poll())).toEqual([3_000]);
  commit(2_999);
  expect(ids(await tail.poll())).toEqual([2_999]);
  commit(3_001);
  expect(ids(await tail.poll())).toEqual([3_001]);
});

it('a late row in a narrow gap comes once, in the poll after it commits', async () => {
  const { tail, commit } = table();
  commit(1);
  await tail.poll();
  commit(2, 4);
  expect(ids(await tail.poll())).toEqual([2, 4]);
  expect(ids(await tail.poll())).toEqual([]);
  commit(3);
  expect(ids(await tail.poll())).toEqual([3]);
  expect(ids(await tail.poll())).toEqual([]);
});
