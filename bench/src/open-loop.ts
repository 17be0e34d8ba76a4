/**
 * An open-loop caller: call i is issued at `i / rate` seconds after `start()`, whether or not
 * the earlier ones have returned; but at most `maxInFlight` at once (the pool of the store it
 * calls): when the server (or this process) cannot keep the rate, the calls fall behind the
 * schedule (`lagMs`) rather than queue for a connection until the pool's connect timeout fails
 * them. `call` settles its own failures (counts them): it must not reject. Used by the steady
 * scenario's enqueuer and by prune.ts's live load.
 */
export interface OpenLoop {
  start(): void;
  /** Calls issued since `start()`. */
  issued(): number;
  /** The time since the first call not yet issued was due (ms): 0 while the rate is kept. */
  lagMs(): number;
  /** Issues no more calls; resolves once every call issued has settled. */
  stop(): Promise<void>;
}

export function openLoop(rate: number, maxInFlight: number, call: () => Promise<void>): OpenLoop {
  let issued = 0;
  let timer: NodeJS.Timeout | undefined;
  let t0 = 0;
  const inFlight = new Set<Promise<void>>();

  /** Every ms or so, the calls whose time has come: a timer of 1 ms fires every 1-2 ms, so at
   *  2,000 calls/s each tick issues 2-4. */
  function tick(): void {
    const due = Math.floor(((performance.now() - t0) * rate) / 1000);
    while (issued < due && inFlight.size < maxInFlight) {
      issued += 1;
      const pending: Promise<void> = call().finally(() => inFlight.delete(pending));
      inFlight.add(pending);
    }
    timer = setTimeout(tick, 1);
  }

  return {
    start() {
      t0 = performance.now();
      tick();
    },
    issued: () => issued,
    lagMs: () => (t0 === 0 ? 0 : Math.max(0, performance.now() - (t0 + (issued * 1000) / rate))),
    async stop() {
      clearTimeout(timer);
      await Promise.allSettled([...inFlight]);
    },
  };
}
