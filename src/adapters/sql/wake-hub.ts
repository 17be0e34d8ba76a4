/**
 * Fans wake-ups and cancel requests out to subscribers. The database connection that listens is opened on the
 * first subscribe and closed after the last unsubscribe.
 *
 * Debounce, per queue: the first wake-up is delivered at once (an idle worker starts within
 * milliseconds); more for that queue within `debounceMs` collapse into one delivered when the
 * window ends. The enqueue statement already sends one NOTIFY per queue; this bounds the rate
 * when many processes enqueue one job at a time.
 */
import { InvalidOptionError } from '../../errors.js';
import type { Unsubscribe } from '../store.js';

export const DEFAULT_NOTIFY_DEBOUNCE_MS = 10;

/** A notification `!cancel:<job id>` asks the worker holding that job to cancel it. A queue
 *  name cannot start with `!`, so it is never taken for a wake-up. */
export const CANCEL_PAYLOAD_PREFIX = '!cancel:';

/** The stores' `notifyDebounceMs` option, checked, with its default. */
export function notifyDebounceOption(value: unknown): number {
  if (value === undefined) return DEFAULT_NOTIFY_DEBOUNCE_MS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidOptionError('notifyDebounceMs', `must be a finite number >= 0, got ${String(value)}`);
  }
  return value;
}

/** Starts listening; resolves once notifications are heard, with a function that stops.
 *  `onReconnect`: listening again after a lost connection (notifications may have been missed). */
export type Listen = (onQueue: (queue: string) => void, onReconnect: () => void) => Promise<() => Promise<void>>;

interface Subscription {
  onWake: (queue?: string) => void;
  onCancel: ((jobId: string) => void) | undefined;
}

interface Window {
  timer: NodeJS.Timeout;
  /** Another wake-up arrived inside the window. */
  again: boolean;
}

export class WakeHub {
  readonly #listen: Listen;
  readonly #debounceMs: number;
  readonly #subscriptions = new Set<Subscription>();
  readonly #windows = new Map<string, Window>();
  #listening: Promise<() => Promise<void>> | undefined;

  constructor(listen: Listen, debounceMs: number) {
    this.#listen = listen;
    this.#debounceMs = debounceMs;
  }

  async subscribe(onWake: (queue?: string) => void, onCancel?: (jobId: string) => void): Promise<Unsubscribe> {
    const subscription: Subscription = { onWake, onCancel };
    this.#subscriptions.add(subscription);
    try {
      await this.#startListening();
    } catch (error) {
      this.#subscriptions.delete(subscription);
      throw error;
    }
    return async () => {
      if (this.#subscriptions.delete(subscription) && this.#subscriptions.size === 0) await this.#stopListening();
    };
  }

  async close(): Promise<void> {
    this.#subscriptions.clear();
    for (const window of this.#windows.values()) clearTimeout(window.timer);
    this.#windows.clear();
    await this.#stopListening();
  }

  #startListening(): Promise<unknown> {
    this.#listening ??= this.#listen(
      (payload) => this.#notified(payload),
      () => this.#deliver(undefined),
    ).catch((error: unknown) => {
      this.#listening = undefined;
      throw error;
    });
    return this.#listening;
  }

  async #stopListening(): Promise<void> {
    const listening = this.#listening;
    this.#listening = undefined;
    // A listen that failed has nothing to stop; its subscriber already saw the error.
    const stop = await listening?.catch(() => undefined);
    await stop?.();
  }

  #notified(payload: string): void {
    if (payload.startsWith(CANCEL_PAYLOAD_PREFIX)) this.#cancel(payload.slice(CANCEL_PAYLOAD_PREFIX.length));
    else this.#wake(payload);
  }

  /** Not debounced: each is for one job, and rare. */
  #cancel(jobId: string): void {
    for (const subscription of this.#subscriptions) {
      const { onCancel } = subscription;
      if (!onCancel) continue;
      queueMicrotask(() => {
        if (this.#subscriptions.has(subscription)) onCancel(jobId);
      });
    }
  }

  #wake(queue: string): void {
    if (this.#debounceMs <= 0) return this.#deliver(queue);
    const window = this.#windows.get(queue);
    if (window) {
      window.again = true;
      return;
    }
    this.#deliver(queue);
    this.#openWindow(queue);
  }

  #openWindow(queue: string): void {
    const window: Window = {
      again: false,
      timer: setTimeout(() => {
        this.#windows.delete(queue);
        if (!window.again) return;
        this.#deliver(queue);
        this.#openWindow(queue);
      }, this.#debounceMs),
    };
    window.timer.unref();
    this.#windows.set(queue, window);
  }

  /** `undefined`: every queue (after a reconnect). */
  #deliver(queue: string | undefined): void {
    for (const subscription of this.#subscriptions) {
      // One microtask per subscriber, as the memory store does: one that throws does not
      // starve the others, and an unsubscribe before the microtask runs is honoured.
      queueMicrotask(() => {
        if (this.#subscriptions.has(subscription)) subscription.onWake(queue);
      });
    }
  }
}
