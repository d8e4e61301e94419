/** The agent methods: the profiles the daemon knows, and every agent pane's state now. */
import { z } from 'zod';
import { agentStateSchema, approvalInfoSchema } from './common.js';

export const agentParams = {
  agents: z.strictObject({}),
  /** The state of every agent pane now, with the approval it waits on. */
  pane_states: z.strictObject({}),
} as const;

export const agentInfoSchema = z.object({
  name: z.string(),
  display_name: z.string(),
  builtin: z.boolean(),
  /** Where the program was found, or null. */
  binary: z.string().nullable(),
});

/** An agent pane's state (see src/contract/agent-state.ts for the states). */
export const paneStateInfoSchema = z.object({ pane_id: z.string(), state: agentStateSchema, approval: approvalInfoSchema.nullable() });

export const agentResults = {
  /** `problems`: entries of the user's profile file that were skipped, and why. */
  agents: z.object({ agents: z.array(agentInfoSchema), problems: z.array(z.string()) }),
  pane_states: z.object({ states: z.array(paneStateInfoSchema) }),
} as const;
