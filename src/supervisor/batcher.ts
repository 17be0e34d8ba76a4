/**
 * Collects single requests into one store call. Requests made while a call is in flight wait
 * for it and go together in the next one, so under load batches grow by themselves and an
 * idle process pays no delay (the first request flushes on the next microtask).
 */
export type BatchRun<I, O> = (items: I[]) => Promise<O[]>;

interface Pending<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export interface BatcherOptions {
  /** Most items in one call. Default 1,000. */
  maxBatch?: number;
}

export function createBatcher<I, O>(run: BatchRun<I, O>, options: BatcherOptions = {}): (item: I) => Promise<O> {
  const maxBatch = options.maxBatch ?? 1_000;
  let queue: Pending<I, O>[] = [];
  let scheduled = false;
  let inFlight = false;

  const flush = async (): Promise<void> => {
    scheduled = false;
    if (inFlight || queue.length === 0) return;
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(batch.length);
    inFlight = true;
    try {
      const results = await run(batch.map((p) => p.item));
      if (results.length !== batch.length) {
        throw new Error(`batched store call answered ${results.length} results for ${batch.length} items`);
      }
      batch.forEach((p, i) => p.resolve(results[i] as O));
    } catch (error) {
      for (const p of batch) p.reject(error);
    } finally {
      inFlight = false;
      schedule();
    }
  };

  const schedule = () => {
    if (scheduled || inFlight || queue.length === 0) return;
    scheduled = true;
    queueMicrotask(() => void flush());
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      schedule();
    });
}
