/** Secrets: fresh tokens, and comparing a presented one in constant time. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

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
