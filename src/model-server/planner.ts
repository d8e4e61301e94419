import type { ConversationView } from './conversation.js';
import type { Scenario, Step } from './scenario.js';
import { toolCallFor, type ToolCall } from './tools.js';

export interface Timing {
  delayMs: number;
  chunkChars: number;
  chunkDelayMs: number;
}

/** What the scripted model answers one request with. */
export type Reply =
  | { kind: 'text'; text: string; timing: Timing }
  | { kind: 'tool'; text: string | undefined; call: ToolCall; timing: Timing }
  | { kind: 'error'; status: number; message: string; timing: Timing }
  /** A structured answer for a side request that asked for JSON (Gemini's model router). */
  | { kind: 'json'; value: unknown; timing: Timing };

/** Why a reply was chosen, for the request log. */
export interface Plan {
  reply: Reply;
  role: 'main' | 'title' | 'structured';
  rule: number;
  step: number;
}

const SHELL_TOOLS = ['Bash', 'exec_command', 'shell', 'run_shell_command', 'bash'];
const DEFAULT_TIMING: Timing = { delayMs: 0, chunkChars: 24, chunkDelayMs: 0 };

function timingOf(step: Step): Timing {
  return {
    delayMs: step.delay_ms ?? DEFAULT_TIMING.delayMs,
    chunkChars: step.chunk_chars ?? DEFAULT_TIMING.chunkChars,
    chunkDelayMs: step.chunk_delay_ms ?? DEFAULT_TIMING.chunkDelayMs,
  };
}

/** A value that fits a JSON schema (JSON Schema or Gemini's upper-case variant), for side requests. */
export function exampleOf(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return {};
  const s = schema as { type?: unknown; properties?: Record<string, unknown>; enum?: unknown[]; items?: unknown };
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const type = typeof s.type === 'string' ? s.type.toLowerCase() : s.properties ? 'object' : 'string';
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, exampleOf(v)]));
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    default:
      return 'scripted';
  }
}

/** True for requests that carry the agent's conversation (they offer the agent's tools). */
function isMainConversation(view: ConversationView): boolean {
  return view.tools.some((t) => SHELL_TOOLS.includes(t)) || view.tools.length >= 3;
}

/** Decides the reply to a request from its content alone. */
export function plan(scenario: Scenario, view: ConversationView, fallbackCwd?: string): Plan {
  const title = scenario.title ?? 'Scripted session';
  if (!isMainConversation(view)) {
    if (view.wantsJson && view.jsonSchema !== undefined) {
      return { reply: { kind: 'json', value: exampleOf(view.jsonSchema), timing: DEFAULT_TIMING }, role: 'structured', rule: -1, step: -1 };
    }
    if (/\btitle\b/i.test(view.text)) {
      // Claude Code asks for {"title": …} as JSON; the others want the plain title.
      const json = /json/i.test(view.text);
      return { reply: { kind: 'text', text: json ? JSON.stringify({ title }) : title, timing: DEFAULT_TIMING }, role: 'title', rule: -1, step: -1 };
    }
  }
  const ruleIndex = scenario.rules.findIndex((r) => r.match === undefined || new RegExp(r.match, 'i').test(view.prompt));
  const rule = scenario.rules[ruleIndex === -1 ? scenario.rules.length - 1 : ruleIndex] ?? scenario.rules[0];
  const steps = rule?.steps ?? [];
  // Past the end of the script the last text is said again (a tool step would loop forever).
  const stepIndex = Math.min(view.stepsDone, steps.length - 1);
  let step = steps[stepIndex];
  if (view.stepsDone >= steps.length && step && 'tool' in step) step = { text: step.text ?? 'Done.' };
  if (!step) return { reply: { kind: 'text', text: 'Done.', timing: DEFAULT_TIMING }, role: 'main', rule: ruleIndex, step: stepIndex };
  const timing = timingOf(step);
  const where = { role: 'main' as const, rule: ruleIndex, step: stepIndex };
  if ('error' in step) return { reply: { kind: 'error', status: step.error, message: step.message ?? defaultErrorMessage(step.error), timing }, ...where };
  if ('tool' in step) {
    const call = toolCallFor(step, view, fallbackCwd);
    if (!call) {
      return { reply: { kind: 'text', text: `(The scripted model wanted a ${step.tool} tool, which this client does not offer.)`, timing }, ...where };
    }
    return { reply: { kind: 'tool', text: step.text, call, timing }, ...where };
  }
  return { reply: { kind: 'text', text: step.text, timing }, ...where };
}

function defaultErrorMessage(status: number): string {
  switch (status) {
    case 429:
      return 'Rate limit exceeded (scripted)';
    case 529:
    case 503:
      return 'Overloaded (scripted)';
    case 401:
      return 'Invalid API key (scripted)';
    case 400:
      return 'Bad request (scripted)';
    default:
      return 'Internal server error (scripted)';
  }
}
