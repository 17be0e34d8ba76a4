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
  /** A batch that failed with an error this says is the items' own (not the store's state)
   *  is tried again one item per call, so that one bad item fails alone. Default: never. */
  isolate?: (error: unknown) => boolean;
}

export function createBatcher<I, O>(run: BatchRun<I, O>, options: BatcherOptions = {}): (item: I) => Promise<O> {
  const maxBatch = options.maxBatch ?? 1_000;
  const isolate = options.isolate ?? (() => false);
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
      if (batch.length > 1 && isolate(error)) await Promise.all(batch.map(runAlone));
      else for (const p of batch) p.reject(error);
    } finally {
      inFlight = false;
      schedule();
    }
  };

  const runAlone = async (p: Pending<I, O>): Promise<void> => {
    try {
      const [result] = await run([p.item]);
      p.resolve(result as O);
    } catch (error) {
      p.reject(error);
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
