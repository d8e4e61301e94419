/**
 * Connections of scoped grants (the programs of one pane each), counted per grant and all together,
 * apart from the owner's: whatever a pane's token opens, the owner still gets in. JSON-RPC's ports
 * and the dashboard's port keep one each.
 */
import type { Grant } from '../../api/index.js';

export class GrantBudget<Connection> {
  private readonly held = new Map<Connection, string>();
  private readonly perGrant = new Map<string, number>();

  constructor(
    /** Most connections one scoped grant holds at once. */
    readonly perGrantLimit: number,
    /** Most connections all scoped grants hold together. */
    readonly totalLimit: number,
  ) {}

  /** Connections of scoped grants held now. */
  get size(): number {
    return this.held.size;
  }

  /**
   * Counts `connection` against `grant` the first time it authenticates as it; says why not when
   * that budget is spent. The owner's connections and one counted already are never refused.
   */
  admit(connection: Connection, grant: Grant): string | undefined {
    if (grant.owner || this.held.has(connection)) return undefined;
    const key = grant.paneId ?? 'scoped';
    const count = this.perGrant.get(key) ?? 0;
    if (count >= this.perGrantLimit) return `too many connections for ${grant.paneId === undefined ? 'this token' : `the token of pane ${grant.paneId}`} (limit ${this.perGrantLimit})`;
    if (this.held.size >= this.totalLimit) return `too many connections of scoped tokens (limit ${this.totalLimit})`;
    this.held.set(connection, key);
    this.perGrant.set(key, count + 1);
    return undefined;
  }

  /** The connection closed: its place is free again. */
  release(connection: Connection): void {
    const key = this.held.get(connection);
    if (key === undefined) return;
    this.held.delete(connection);
    const count = (this.perGrant.get(key) ?? 1) - 1;
    if (count > 0) this.perGrant.set(key, count);
    else this.perGrant.delete(key);
  }
}
