/**
 * An AbortController made only when someone asks for its signal. Most handlers of short jobs
 * never look at it, and making one per job costs more than the rest of a no-op job's
 * bookkeeping (see BENCHMARKS.md). A signal asked for after the abort is already aborted.
 */
export class LazyAbortController {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /** The abort's reason; undefined until aborted. */
  get reason(): unknown {
    return this.#reason;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
