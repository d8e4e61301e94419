/** A typed event with listeners, in the shape xterm.js and node-pty use: subscribing returns its undo. */
export type Unsubscribe = () => void;

export class Emitter<T> {
  private readonly listeners = new Set<(value: T) => void>();

  /** Calls `listener` on every fire until the returned function is called. */
  on(listener: (value: T) => void): Unsubscribe {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  fire(value: T): void {
    // A copy: a listener may unsubscribe itself (or others) while being called.
    for (const listener of [...this.listeners]) listener(value);
  }
}
