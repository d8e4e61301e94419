import type { Disposable } from './disposable.js';

/** Subscribes a listener; the returned disposable unsubscribes it. */
export type Event<T> = (listener: (event: T) => void) => Disposable;

/**
 * A typed event source. A throwing listener does not stop the others from hearing the event;
 * the first error is rethrown to the code that fired, after every listener ran.
 */
export class Emitter<T> implements Disposable {
  private listeners = new Set<(event: T) => void>();
  private disposed = false;

  /** The subscribe function to expose publicly. */
  readonly event: Event<T> = (listener) => {
    if (this.disposed) return { dispose() {} };
    // Wrap so the same function can subscribe twice and unsubscribe independently.
    const entry = (event: T): void => listener(event);
    this.listeners.add(entry);
    return { dispose: () => this.listeners.delete(entry) };
  };

  get listenerCount(): number {
    return this.listeners.size;
  }

  fire(event: T): void {
    if (this.listeners.size === 0) return;
    let firstError: unknown;
    let failed = false;
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        if (!failed) firstError = err;
        failed = true;
      }
    }
    if (failed) throw firstError;
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
  }
}
