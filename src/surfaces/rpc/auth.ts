import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { SwitchboardError } from '../../core/errors.js';
import { OWNER_GRANT, type Grant } from '../../api/authorize.js';
import type { Scope } from '../../protocol/scopes.js';

/** A fresh 256-bit token, hex encoded. */
export function generateToken(): string {
  return randomBytes(32).toString('hex');
}

/**
 * Compares a presented token with the expected one in constant time. Both are hashed first so the
 * comparison takes the same time whatever the presented token's length.
 */
export function tokenMatches(expected: string, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(presented).digest();
  return timingSafeEqual(a, b);
}

/** Most scoped tokens alive at once (one per pane that has one; panes are capped well below). */
const MAX_SCOPED_TOKENS = 4096;

/**
 * The daemon's tokens: the owner's, and a scoped one per pane whose programs must not have the
 * owner's (agent panes, panes a scoped caller started). A presented token is hashed and looked up
 * by its digest (a digest reveals nothing about a token), then compared in constant time.
 */
export class TokenRegistry {
  private readonly scoped = new Map<string, { digest: Buffer; grant: Grant }>();

  constructor(readonly owner: string) {}

  /** A fresh token for the programs of pane `paneId`, allowed `scopes` only. */
  issue(paneId: string, scopes: Iterable<Scope>): string {
    if (this.scoped.size >= MAX_SCOPED_TOKENS) throw new SwitchboardError('LIMIT_EXCEEDED', `too many scoped tokens (limit ${MAX_SCOPED_TOKENS})`);
    const token = generateToken();
    const digest = createHash('sha256').update(token).digest();
    this.scoped.set(digest.toString('hex'), { digest, grant: { owner: false, scopes: new Set(scopes), paneId } });
    return token;
  }

  /** Forgets every token issued for pane `paneId` (it was removed). */
  revokePane(paneId: string): void {
    for (const [key, entry] of this.scoped) if (entry.grant.paneId === paneId) this.scoped.delete(key);
  }

  /** What `presented` allows, or undefined for a token that is not one of ours. */
  resolve(presented: unknown): Grant | undefined {
    if (typeof presented !== 'string') return undefined;
    if (tokenMatches(this.owner, presented)) return OWNER_GRANT;
    const digest = createHash('sha256').update(presented).digest();
    const entry = this.scoped.get(digest.toString('hex'));
    return entry && timingSafeEqual(entry.digest, digest) ? entry.grant : undefined;
  }
}
