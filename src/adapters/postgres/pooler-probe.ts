/**
 * Whether each connection of a pool is one server session of its own, as named statements and
 * LISTEN need; refused with a TransactionPoolerError when a transaction-mode pooler shows.
 *
 * A direct connection is told at once: the backend's pid is the one the server announced at
 * connect (BackendKeyData). Behind a pooler the announced one is the pooler's own, and its
 * mode cannot be read from the server: two connections are watched instead, for a few rounds.
 * In each, a second connection runs a query in a transaction, then the first runs one. In
 * session mode the first always runs on one server connection, and the second never gets it. In transaction mode the first's server connection goes back to the
 * pooler after each query: the second gets it (PgBouncer hands out the one freed last,
 * server_round_robin = 0, its default), or the first gets another. A round that shows either
 * proves it; rounds that show neither (other clients took the freed connection each time)
 * prove nothing, and the first prepared statement that lands on another server connection
 * is refused with the same error (pg-driver.ts).
 */
import pg from 'pg';
import { TransactionPoolerError } from '../../errors.js';

/** Enough that a transaction-mode pooler busy with other clients shows itself, cheap for a
 *  session-mode one (three queries each, once per store). */
const ROUNDS = 10;

export async function assertSessionPerConnection(pool: pg.Pool, database: string): Promise<void> {
  const first = await pool.connect();
  let broken: Error | undefined;
  // Checked out, a connection the server drops emits 'error' that nobody else hears.
  const onError = (error: Error) => {
    broken = error;
  };
  first.on('error', onError);
  try {
    const own = await backendPid(first);
    if (own === (first as unknown as { processID: number | null }).processID) return;
    // Not from the pool: it may have a single connection, held by `first`.
    const second = new pg.Client((pool as unknown as { options: pg.ClientConfig }).options);
    second.on('error', () => {});
    try {
      await second.connect();
      // Each connection's query comes just after the other freed its server connection, if
      // it was freed: handed out last-freed-first, it goes to the other.
      for (let round = 0; round < ROUNDS; round++) {
        await second.query('begin');
        const other = await backendPid(second);
        await second.query('commit');
        if (other === own) throw new TransactionPoolerError(database, 'two connections ran on one server session');
        if ((await backendPid(first)) !== own) throw new TransactionPoolerError(database, 'a connection moved from one server session to another');
      }
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
