/**
 * The daemon's tokens and the authenticate step every transport takes: a presented token becomes
 * the caller's grant (api/authorize.ts), or nothing. A transport checks it where its protocol
 * carries it (seed 000's JSON-RPC: in every request's params; the dashboard: at the WebSocket
 * upgrade) and hands the dispatcher the grant, never the token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { SwitchboardError } from '../core/errors.js';
import { generateToken } from '../core/secrets.js';
import type { Scope } from '../protocol/scopes.js';
import { OWNER_GRANT, type Grant } from './authorize.js';

/** What a presented credential allows, or undefined for one that is not ours. */
export type Authenticate = (presented: unknown) => Grant | undefined;

/** Most scoped tokens alive at once (one per pane that has one; panes are capped well below). */
const MAX_SCOPED_TOKENS = 4096;
/** Most removed panes whose lingering processes are remembered (oldest forgotten first). */
const MAX_REVOKED_PANES = 4096;

/**
 * The daemon's tokens: the owner's, and a scoped one per pane whose programs must not have the
 * owner's (agent panes, panes a scoped caller started). A presented token is hashed and looked up
 * by its digest (a digest reveals nothing about a token), then compared in constant time.
 */
export class TokenRegistry {
  private readonly scoped = new Map<string, { digest: Buffer; grant: Grant }>();
  /** The grant of each pane whose programs hold a scoped token, by pane id. */
  private readonly paneGrants = new Map<string, Grant>();
  /**
   * Panes with a scoped token that were removed: a process of theirs still running (it left the
   * pane's tree) may do nothing at all, whatever token it shows.
   */
  private readonly revokedPanes = new Map<string, Grant>();

  /** The owner's token hashed once: each request then costs one hash, its own. */
  private readonly ownerDigest: Buffer;

  constructor(readonly owner: string) {
    this.ownerDigest = createHash('sha256').update(owner).digest();
  }

  /** A fresh token for the programs of pane `paneId`, allowed `scopes` only. */
  issue(paneId: string, scopes: Iterable<Scope>): string {
    if (this.scoped.size >= MAX_SCOPED_TOKENS) throw new SwitchboardError('LIMIT_EXCEEDED', `too many scoped tokens (limit ${MAX_SCOPED_TOKENS})`);
    const token = generateToken();
    const digest = createHash('sha256').update(token).digest();
    const grant: Grant = { owner: false, scopes: new Set(scopes), paneId };
    this.scoped.set(digest.toString('hex'), { digest, grant });
    this.paneGrants.set(paneId, grant);
    return token;
  }

  /** Forgets every token issued for pane `paneId` (it was removed). */
  revokePane(paneId: string): void {
    for (const [key, entry] of this.scoped) if (entry.grant.paneId === paneId) this.scoped.delete(key);
    if (!this.paneGrants.delete(paneId)) return;
    this.revokedPanes.set(paneId, { owner: false, scopes: new Set(), paneId });
    if (this.revokedPanes.size > MAX_REVOKED_PANES) this.revokedPanes.delete(this.revokedPanes.keys().next().value as string);
  }

  /**
   * True while any pane has a scoped token: only then can a caller's process narrow its grant (a
   * removed pane's processes were ended with it; one that hid from that also hid its marker).
   */
  get hasScopedPanes(): boolean {
    return this.paneGrants.size > 0;
  }

  /** The grant of pane `paneId`'s programs: its scoped token's, nothing for a removed one, undefined for an owner's pane or an unknown id. */
  grantOfPane(paneId: string): Grant | undefined {
    return this.paneGrants.get(paneId) ?? this.revokedPanes.get(paneId);
  }

  /** The panes whose programs hold a scoped token, with their grants. */
  scopedPanes(): IterableIterator<[string, Grant]> {
    return this.paneGrants.entries();
  }

  /** What `presented` allows, or undefined for a token that is not one of ours. */
  resolve(presented: unknown): Grant | undefined {
    if (typeof presented !== 'string') return undefined;
    // Hashed first, so the comparison takes the same time whatever the presented token's length.
    const digest = createHash('sha256').update(presented).digest();
    if (timingSafeEqual(this.ownerDigest, digest)) return OWNER_GRANT;
    if (this.scoped.size === 0) return undefined;
    const entry = this.scoped.get(digest.toString('hex'));
    return entry && timingSafeEqual(entry.digest, digest) ? entry.grant : undefined;
  }

  /** The authenticate step over these tokens, for the transports. */
  readonly authenticate: Authenticate = (presented) => this.resolve(presented);
}
