/** The daemon's own methods: who it is, a liveness check, shutting it down, and a dashboard login. */
import { z } from 'zod';
import { success } from './common.js';

export const daemonParams = {
  info: z.strictObject({}),
  ping: z.strictObject({}),
  shutdown: z.strictObject({}),
  /** A fresh one-time login URL for the web dashboard. */
  dashboard_login: z.strictObject({}),
} as const;

const endpointSchema = z.object({ host: z.string(), port: z.number() });

export const infoResultSchema = z.object({
  name: z.literal('switchboard'),
  version: z.string(),
  pid: z.number(),
  started_at: z.string(),
  uptime_ms: z.number(),
  panes: z.object({ total: z.number(), alive: z.number() }),
  transports: z.object({ tcp: endpointSchema.optional(), socket: z.string().optional(), dashboard: endpointSchema.optional() }),
  limits: z.object({ max_request_bytes: z.number(), max_connections: z.number() }),
  /** The daemon process's memory, in bytes. */
  memory: z.object({ rss: z.number(), heap_total: z.number(), heap_used: z.number(), external: z.number(), array_buffers: z.number() }),
  /** The budget for what panes and sessions hold of their output: each member (pane or session) has an equal share. */
  output_budget: z.object({ total_bytes: z.number(), members: z.number(), share_bytes: z.number(), spill_total_bytes: z.number() }),
  /** What the daemon found at start of a daemon of the same home that had died (SIGKILL, a crash), and ended. */
  recovered: z
    .object({
      daemon_pids: z.array(z.number()),
      panes: z.number(),
      processes: z.number(),
      survivors: z.array(z.number()),
      runtime_file_removed: z.boolean(),
      socket_removed: z.boolean(),
      /** Agents' private temporary folders removed (their owner died). */
      temp_folders: z.number(),
    })
    .optional(),
  /** The agent bridge: on (with the policy's origin and the runs a dead daemon left in flight, now failed (interrupted)), or off and why. */
  bridge: z
    .object({
      on: z.boolean(),
      problem: z.string().optional(),
      policy: z.string().optional(),
      ledger: z.string().optional(),
      interrupted_runs: z.array(z.string()).optional(),
      orphans_ended: z.number().optional(),
      /** The agent CLIs kept open for follow-ups: how many, their processes, the policy's cap and idle time. */
      idle_conversations: z.object({ conversations: z.number(), processes: z.number(), max: z.number(), idle_ms: z.number(), backends: z.record(z.string(), z.object({ conversations: z.number(), processes: z.number() })) }).optional(),
    })
    .optional(),
});

export const daemonResults = {
  info: infoResultSchema,
  ping: z.object({ pong: z.literal(true), time: z.string() }),
  shutdown: success,
  dashboard_login: z.object({ url: z.string() }),
} as const;
