/** The approval methods: answering the approval prompt an agent pane waits on. */
import { z } from 'zod';
import { APPROVAL_DECISIONS } from '../../contract/index.js';
import { optional, paneId } from './common.js';

export const approvalParams = {
  /** Answers the approval an agent pane waits on, with the option that means allow-once or deny. */
  answer_approval: z.strictObject({ pane_id: paneId, decision: z.enum(APPROVAL_DECISIONS), approval_id: optional(z.string().min(1).max(256)) }),
} as const;

export const approvalResults = {
  answer_approval: z.object({ success: z.literal(true), answered: z.object({ label: z.string().nullable(), keys: z.array(z.string()) }) }),
} as const;
