/**
 * LISTEN on a connection of its own, taken from the pool and held. When it drops (server
 * restart, network, pg_terminate_backend) it is replaced, with a growing delay between
 * attempts of at most a second. Wake-ups sent meanwhile are lost: once it listens again it
 * says so (`onReconnect`), and the supervisor claims at once, whatever its claim backoff has
 * grown to during the outage.
 */
import type pg from 'pg';
import type { Logger } from '../../types.js';

const FIRST_RETRY_MS = 100;
/** A connection attempt a second while the server is away is cheap, and bounds how late
 *  work resumes after it is back. */
const MAX_RETRY_MS = 1_000;

export interface PgListenOptions {
  pool: pg.Pool;
  channel: string;
  onNotify: (payload: string) => void;
  /** Listening again after the connection dropped: notifications may have been missed. */
  onReconnect?: () => void;
  logger: Logger | undefined;
}

/** Resolves once the first LISTEN succeeded (rejects if it failed), with a stop function. */
export async function pgListen(options: PgListenOptions): Promise<() => Promise<void>> {
  const { pool, channel, onNotify, onReconnect, logger } = options;
  let current: pg.PoolClient | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = FIRST_RETRY_MS;
  let stopped = false;

  const connect = async (): Promise<void> => {
    const client = await pool.connect();
    const drop = (error?: Error): void => {
      if (current !== client) return;
      current = undefined;
      client.release(error ?? true);
      if (stopped) return;
      logger?.warn({ err: error, channel }, 'jobvisor: the LISTEN connection dropped; reconnecting');
      reconnectLater();
    };
    // Without an 'error' listener, a connection killed by the server would crash the process.
    client.on('error', drop);
    client.on('end', () => drop());
    client.on('notification', (message) => {
      if (message.channel === channel && message.payload !== undefined) onNotify(message.payload);
    });
    try {
      await client.query(`listen "${channel}"`);
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    if (stopped) {
      client.release(true);
      return;
    }
    current = client;
  };

  const reconnectLater = (): void => {
    retryTimer = setTimeout(() => {
      connect().then(
        () => {
          retryMs = FIRST_RETRY_MS;
          if (stopped) return;
          logger?.info({ channel }, 'jobvisor: LISTEN re-established');
          onReconnect?.();
        },
        (error: unknown) => {
          if (stopped) return;
          retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
          logger?.warn({ err: error, channel, retryMs }, 'jobvisor: LISTEN reconnect failed');
          reconnectLater();
        },
      );
    }, retryMs);
    retryTimer.unref();
  };

  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retryTimer);
    const client = current;
    current = undefined;
    // Destroyed rather than returned: a pooled connection must not keep listening.
    client?.release(true);
  };
}
