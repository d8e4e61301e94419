/**
 * Concurrency limits: at most `global` runs at once over every backend, and at most a backend's own
 * limit on that backend. Runs beyond wait in `queued`, first in first out: when a place frees up,
 * the oldest waiting run that fits takes it (a run held back only by its own backend's limit does
 * not hold up a run of another backend behind it).
 */
import type { Disposable } from '../core/disposable.js';

interface Waiting {
  runId: string;
  backend: string;
  admit: () => void;
}

export interface AdmissionStats {
  running: number;
  waiting: number;
  byBackend: Record<string, number>;
}

export class AdmissionQueue {
  private readonly waiting: Waiting[] = [];
  private readonly running = new Map<string, string>();
  private readonly perBackend = new Map<string, number>();

  constructor(
    private readonly global: number,
    private readonly backendLimit: (backend: string) => number | null,
  ) {}

  /**
   * Asks for a place for a run; `admit` is called (synchronously when there is room now) once it
   * has one. The disposable withdraws a run still waiting, or gives back the place of one admitted.
   */
  request(runId: string, backend: string, admit: () => void): Disposable {
    this.waiting.push({ runId, backend, admit });
    this.pump();
    return { dispose: () => this.release(runId) };
  }

  /** Withdraws a waiting run or frees a running one's place; false when it held neither. */
  release(runId: string): boolean {
    const i = this.waiting.findIndex((w) => w.runId === runId);
    if (i >= 0) {
      this.waiting.splice(i, 1);
      return true;
    }
    const backend = this.running.get(runId);
    if (backend === undefined) return false;
    this.running.delete(runId);
    this.perBackend.set(backend, (this.perBackend.get(backend) ?? 1) - 1);
    this.pump();
    return true;
  }

  /** Where a waiting run is in line (0: next), or -1. */
  position(runId: string): number {
    return this.waiting.findIndex((w) => w.runId === runId);
  }

  /** True when a run of `backend` asking now would start at once rather than wait. */
  hasRoom(backend: string): boolean {
    return this.fits(backend);
  }

  stats(): AdmissionStats {
    return { running: this.running.size, waiting: this.waiting.length, byBackend: Object.fromEntries(this.perBackend) };
  }

  private fits(backend: string): boolean {
    if (this.running.size >= this.global) return false;
    const limit = this.backendLimit(backend);
    return limit === null || (this.perBackend.get(backend) ?? 0) < limit;
  }

  private pump(): void {
    for (let i = 0; i < this.waiting.length && this.running.size < this.global; ) {
      const w = this.waiting[i] as Waiting;
      if (!this.fits(w.backend)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.running.set(w.runId, w.backend);
      this.perBackend.set(w.backend, (this.perBackend.get(w.backend) ?? 0) + 1);
      w.admit();
    }
  }
}
