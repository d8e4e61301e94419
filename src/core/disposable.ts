/** Lifecycle as disposables, in the style of node-pty and xterm.js. */
export interface Disposable {
  dispose(): void;
}

/** A disposable that runs `fn` once. */
export function toDisposable(fn: () => void): Disposable {
  let done = false;
  return {
    dispose() {
      if (done) return;
      done = true;
      fn();
    },
  };
}

/** Collects disposables and disposes them together, newest first. */
export class DisposableStore implements Disposable {
  private readonly items: Disposable[] = [];
  private disposed = false;

  /** Adds `item`; if the store is already disposed, disposes `item` at once. */
  add<T extends Disposable>(item: T): T {
    if (this.disposed) item.dispose();
    else this.items.push(item);
    return item;
  }

  /** Adds each of `items`, as add() does. */
  addAll(...items: Disposable[]): void {
    for (const item of items) this.add(item);
  }

  /** Disposes what it holds now, newest first, and stays open for more (a pane respawned gets new subscriptions). */
  clear(): void {
    if (this.disposed) return;
    this.disposeItems();
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.disposeItems();
  }

  private disposeItems(): void {
    const errors: unknown[] = [];
    for (const item of this.items.splice(0).reverse()) {
      try {
        item.dispose();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw errors[0];
  }
}
