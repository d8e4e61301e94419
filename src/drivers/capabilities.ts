/**
 * What a way of running an agent can do, and whether it can run here: one type for every driver
 * (headless, a structured conversation, ACP) and every backend of the run service, which adds its
 * name and mode (runs/backends/backend-driver.ts). A run ends in one vocabulary too: EndStatus.
 */
import type { SchemaVersion } from '../output/stream-events.js';
export type { EndStatus } from '../contract/index.js';

export interface AgentCapabilities {
  /** The structured format its output is read as (`claude-stream-json`, `acp`, `screen`). */
  format: string;
  /** Events arrive while the run goes, not only at its end. */
  streaming: boolean;
  /** A run can continue an earlier one in the same agent conversation (one process across prompts). */
  followUps: boolean;
  /** Tool calls are put to Switchboard's approvals before they happen (else the CLI's own flags or sandbox decide). */
  permissionRequests: boolean;
  schemaVersions: readonly SchemaVersion[];
}

export interface AgentHealth {
  ok: boolean;
  binary: string | null;
  version: string | null;
  problem?: string;
}
