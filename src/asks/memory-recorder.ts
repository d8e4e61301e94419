/** An AskRecorder in memory, bounded: the newest MAX_KEPT_ASKS asks. */
import type { AskRecord, AskRecorder } from './types.js';

/** Asks kept; the oldest are forgotten beyond this. */
export const MAX_KEPT_ASKS = 1_000;

export class MemoryAskRecorder implements AskRecorder {
  private readonly asks = new Map<string, AskRecord>();

  constructor(private readonly limit = MAX_KEPT_ASKS) {}

  record(ask: Readonly<AskRecord>): void {
    this.asks.delete(ask.id);
    this.asks.set(ask.id, { ...ask });
    for (const id of this.asks.keys()) {
      if (this.asks.size <= this.limit) break;
      this.asks.delete(id);
    }
  }

  get(id: string): Promise<AskRecord | undefined> {
    const found = this.asks.get(id);
    return Promise.resolve(found ? { ...found } : undefined);
  }

  list(): Promise<AskRecord[]> {
    return Promise.resolve([...this.asks.values()].map((a) => ({ ...a })));
  }
}
