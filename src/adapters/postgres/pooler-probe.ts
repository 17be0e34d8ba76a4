/**
 * Whether each connection of a pool is one server session of its own, as named statements and
 * LISTEN need; refused with a TransactionPoolerError when a transaction-mode pooler shows.
 *
 * A direct connection is told at once: the backend's pid is the one the server announced at
 * connect (BackendKeyData). Behind a pooler the announced one is the pooler's own, and the
 * mode cannot be read from the server: two sessions are watched instead. A connection runs a
 * query, then a second one opens a transaction. In session mode the second never gets the
 * first one's server connection, and the first keeps its own. In transaction mode the first's
 * server connection went back to the pooler after its query, and PgBouncer hands out the one
 * freed last (server_round_robin = 0, its default): the second gets it, or the first gets
 * another. A pooler that picks otherwise may pass here; its first prepared statement that
 * lands on another server connection is refused with the same error (pg-driver.ts).
 */
import pg from 'pg';
import { TransactionPoolerError } from '../../errors.js';

export async function assertSessionPerConnection(pool: pg.Pool, database: string): Promise<void> {
  const first = await pool.connect();
  let broken: Error | undefined;
  // Checked out, a connection the server drops emits 'error' that nobody else hears.
  const onError = (error: Error) => {
    broken = error;
  };
  first.on('error', onError);
  try {
    const before = await backendPid(first);
    if (before === (first as unknown as { processID: number | null }).processID) return;
    // Not from the pool: it may have a single connection, held by `first`.
    const second = new pg.Client((pool as unknown as { options: pg.ClientConfig }).options);
    second.on('error', () => {});
    try {
      await second.connect();
      await second.query('begin');
      const other = await backendPid(second);
      const after = await backendPid(first);
      await second.query('commit');
      if (other === before) throw new TransactionPoolerError(database, 'two connections ran on one server session');
      if (after !== before) throw new TransactionPoolerError(database, 'a connection moved to another server session');
    } finally {
      await second.end().catch(() => {});
    }
  } catch (error) {
    if (!(error instanceof TransactionPoolerError)) broken ??= error as Error;
    throw error;
  } finally {
    first.off('error', onError);
    first.release(broken);
  }
}

async function backendPid(client: pg.ClientBase): Promise<number> {
  return (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
}
