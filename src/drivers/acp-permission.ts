/**
 * An ACP `session/request_permission` in Switchboard's terms: the tool call as the policy's
 * subject, and the decision as the option the agent offered for it. ACP describes a call by its
 * kind, title, input and locations, never by the CLI's tool name, so the kind decides what the
 * policy judges.
 */
import { asRecord, asString } from '../output/entry.js';
import { commandOfInput, filePathOfCall, locationsOf } from '../output/normalize-acp.js';
import type { ApprovalSubject } from '../approvals/index.js';
import { subjectForTool, type PermissionRequest } from './permission.js';

/** The words for a subject are the broker's (one vocabulary for every source). */
export { describeSubject } from '../approvals/index.js';

/** An option of a permission request, as ACP sends it. */
export interface AcpPermissionOption {
  optionId: string;
  kind: string;
  name?: string;
}

/** What the client answers: the chosen option, or "cancelled" when there is none to choose. */
export type AcpPermissionOutcome = { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' };

/** The permission request the policy judges, from the request's `toolCall`. */
export function permissionRequestFor(toolCall: unknown): PermissionRequest {
  const call = asRecord(toolCall) ?? {};
  const kind = asString(call.kind);
  const title = asString(call.title);
  const input = asRecord(call.rawInput) ?? {};
  const path = filePathOfCall(input, locationsOf(call.locations));
  const toolName = kind !== undefined && kind !== 'other' ? kind : (title ?? 'tool');
  const toolCallId = asString(call.toolCallId);
  return { toolName, subject: subjectFor(kind, title, input, path), input, ...(toolCallId !== undefined ? { toolCallId } : {}) };
}

function subjectFor(kind: string | undefined, title: string | undefined, input: Record<string, unknown>, path: string | undefined): ApprovalSubject {
  const withPath = path !== undefined ? { path } : {};
  switch (kind) {
    case 'execute': {
      // Gemini CLI 0.61 sends no input for a shell call: the title is the command it will run.
      const command = commandOfInput(input) ?? title;
      return { tool: 'shell', toolName: kind, ...(command !== undefined ? { command } : {}) };
    }
    case 'edit':
      return { tool: 'file_edit', toolName: kind, ...withPath };
    case 'read':
      return { tool: 'file_read', toolName: kind, ...withPath };
    case 'fetch': {
      const url = asString(input.url);
      return { tool: 'network', toolName: kind, ...(url !== undefined ? { url } : {}) };
    }
    case undefined:
    case 'other':
      // No kind to go by: the title may be a tool name the policy knows (bash, write_file, …).
      return subjectForTool(title ?? 'tool', input);
    default:
      return { tool: 'other', toolName: title ?? kind };
  }
}

/**
 * The option that carries out `decision`: allow once (else always) to allow, reject once (else
 * always) to deny; "cancelled" when the agent offered no such option.
 */
export function outcomeFor(options: readonly AcpPermissionOption[], decision: 'allow' | 'deny'): AcpPermissionOutcome {
  const preferred = decision === 'allow' ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
  for (const kind of preferred) {
    const option = options.find((o) => o.kind === kind);
    if (option) return { outcome: 'selected', optionId: option.optionId };
  }
  return { outcome: 'cancelled' };
}
