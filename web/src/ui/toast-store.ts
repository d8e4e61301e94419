/**
 * Messages that must not block the page (a failed request, a lost connection): a short list the
 * toast area shows, each leaving by itself after a while or when clicked.
 */
export interface Toast {
  id: number;
  kind: 'error' | 'info';
  text: string;
}

const LIFETIME_MS = { error: 10_000, info: 5_000 } as const;
/** More than this at once is a flood; the oldest go first. */
const MAX_SHOWN = 5;

export class ToastStore {
  private toasts: readonly Toast[] = [];
  private nextId = 1;
  private readonly listeners = new Set<() => void>();

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  readonly getSnapshot = (): readonly Toast[] => this.toasts;

  readonly error = (text: string): void => {
    this.push('error', text);
  };

  readonly info = (text: string): void => {
    this.push('info', text);
  };

  dismiss(id: number): void {
    this.set(this.toasts.filter((t) => t.id !== id));
  }

  private push(kind: Toast['kind'], text: string): void {
    const toast: Toast = { id: this.nextId++, kind, text };
    this.set([...this.toasts, toast].slice(-MAX_SHOWN));
    window.setTimeout(() => {
      this.dismiss(toast.id);
    }, LIFETIME_MS[kind]);
  }

  private set(toasts: readonly Toast[]): void {
    this.toasts = toasts;
    for (const listener of [...this.listeners]) listener();
  }
}
