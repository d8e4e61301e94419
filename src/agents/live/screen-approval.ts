/**
 * The screen's adapter to the approval broker: an approval prompt read off an agent's screen
 * becomes the broker's request (its subject, and whether the read is certain), and a decision
 * becomes the keys that carry it out. The keys are chosen here only: the option on screen that
 * means allow-once or deny, else the profile's approval_keys.
 */
import type { ApprovalRequest, ApprovalSubject } from '../../approvals/index.js';
import { optionFor, type ApprovalOption, type ApprovalPrompt } from '../screen/approval-prompt.js';
import type { ProfileData } from '../profiles/schema.js';

/** What the policy judges, from what the prompt showed. */
export function subjectOfPrompt(prompt: ApprovalPrompt): ApprovalSubject {
  return {
    tool: prompt.tool,
    ...(prompt.command !== null ? { command: prompt.command } : {}),
    ...(prompt.path !== null ? { path: prompt.path } : {}),
    ...(prompt.toolName !== null ? { toolName: prompt.toolName } : {}),
  };
}

/** The broker's request for the prompt on pane `paneId`'s screen (null: on screen, but not readable). */
export function screenApprovalRequest(paneId: string, id: string, prompt: ApprovalPrompt | null): ApprovalRequest {
  if (!prompt) return { id, source: { kind: 'screen', paneId }, subject: null, certain: false, doubts: ['the approval prompt could not be read'] };
  return { id, source: { kind: 'screen', paneId }, subject: subjectOfPrompt(prompt), certain: prompt.certain, doubts: prompt.doubts };
}

/** The option that carries out `decision` on this prompt and the keys to press (the profile's when no option fits). */
export function answerFor(keys: ProfileData['approval_keys'], prompt: ApprovalPrompt | null, decision: 'allow' | 'deny'): { option: ApprovalOption | null; keys: string[] } {
  const option = prompt ? optionFor(prompt, decision === 'allow' ? 'allow_once' : 'deny') : null;
  return { option, keys: option?.keys ?? (decision === 'allow' ? keys.allow_once : keys.deny) };
}

/** A prompt without where it sat on screen (what a record of it keeps). */
export function withoutRow(prompt: ApprovalPrompt): Omit<ApprovalPrompt, 'row'> {
  const { row: _row, ...rest } = prompt;
  return rest;
}

/** What makes a prompt the same one still on screen: where it is, what it asks, what it offers. */
export function promptIdentity(prompt: ApprovalPrompt | null): string {
  return JSON.stringify([prompt?.row, prompt?.command, prompt?.path, prompt?.options.map((o) => o.label)]);
}
