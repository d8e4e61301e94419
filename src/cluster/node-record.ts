/**
 * What a node says about itself in its lease (sb_nodes, key `node.<name>`): written by the node
 * (node-lease.ts), read by the controller (node-directory.ts), checked on the way in since any
 * node's user can write it. Fields are snake_case, as on every other wire of Switchboard.
 */
import { z } from 'zod';

/** An agent CLI the node can run, as `switchboard doctor` found it. */
const CliSchema = z.object({ name: z.string().min(1), version: z.string() });

export const NodeRecordSchema = z.object({
  name: z.string().min(1),
  /** Free-form tags a run can ask for (`gpu`, `linux`, `eu`). */
  labels: z.array(z.string()),
  clis: z.array(CliSchema),
  /** The repositories the node has at hand, by name or URL. */
  repos: z.array(z.string()),
  slots: z.object({ total: z.number().int().nonnegative(), free: z.number().int().nonnegative() }),
  /** When the node process started, ms since the epoch. */
  started_at: z.number(),
  /** Counts this process's registrations: a new one after a lapse is a new epoch, whose runs are new. */
  epoch: z.number().int().positive(),
  /** A random id of the node process, so a process can tell its own record from another's of the same name. */
  instance: z.string().min(1),
});

export type NodeRecord = z.infer<typeof NodeRecordSchema>;

/** What the node's owner describes; the lease adds started_at, epoch and instance. */
export type NodeDescription = Pick<NodeRecord, 'name' | 'labels' | 'clis' | 'repos' | 'slots'>;
