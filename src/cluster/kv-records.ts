/**
 * What a key of ours in a key-value bucket holds (a lease, a claim, a cancel mark). Three things,
 * told apart in one place: nothing (no entry, or a delete); a record of ours, checked against its
 * schema; or a stray, an entry that is no record of ours. Any client can have the server answer a
 * JetStream API request of its own onto any key (an API reply goes wherever its asker says:
 * reflected.ts), so a stray is no one's word: it decides nothing, and whoever owns the key writes
 * over it (compare-and-set on its revision).
 */
import type { KvEntry } from '@nats-io/kv';
import type { z } from 'zod';
import { parseJson } from './control.js';

export type KvRead<T> = { kind: 'none' } | { kind: 'stray'; revision: number } | { kind: 'record'; record: T; revision: number };

/** What `entry` (a get's answer, null for none) holds, by `schema`. */
export function readKvEntry<S extends z.ZodType>(entry: KvEntry | null, schema: S): KvRead<z.infer<S>> {
  if (entry?.operation !== 'PUT') return { kind: 'none' };
  const parsed = schema.safeParse(parseJson(entry.value));
  return parsed.success ? { kind: 'record', record: parsed.data, revision: entry.revision } : { kind: 'stray', revision: entry.revision };
}
