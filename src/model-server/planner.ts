import type { ConversationView } from './conversation.js';
import type { Scenario, Step } from './scenario.js';
import { toolCallFor, type ToolCall } from './tools.js';

export interface Timing {
  /** The gate the answer waits for, when the step names one. */
  gate?: string;
  delayMs: number;
  chunkChars: number;
  chunkDelayMs: number;
}

/** What the scripted model answers one request with. */
export type Reply =
  | { kind: 'text'; text: string; timing: Timing }
  | { kind: 'tool'; text: string | undefined; call: ToolCall; timing: Timing }
  | { kind: 'error'; status: number; message: string; timing: Timing }
  /** A structured answer for a side request that asked for JSON (Gemini's model router, JSON mode). */
  | { kind: 'json'; value: unknown; timing: Timing };

/** Why a reply was chosen, for the request log. */
export interface Plan {
  reply: Reply;
  role: 'main' | 'title' | 'structured';
  /**
   * The scenario rule that matched the prompt; null when none did (the last rule answered), and -1
   * for side requests, which are answered without the script.
   */
  rule: number | null;
  step: number;
}

const SHELL_TOOLS = ['Bash', 'exec_command', 'shell', 'run_shell_command', 'bash'];
const DEFAULT_TIMING: Timing = { delayMs: 0, chunkChars: 24, chunkDelayMs: 0 };

function timingOf(step: Step): Timing {
  return {
    ...(step.wait_for !== undefined ? { gate: step.wait_for } : {}),
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

/** The answer to a title or structured side request, or undefined when the script should answer. */
function planSideRequest(scenario: Scenario, view: ConversationView): Plan | undefined {
  if (view.wantsJson && view.jsonSchema !== undefined) {
    return { reply: { kind: 'json', value: exampleOf(view.jsonSchema), timing: DEFAULT_TIMING }, role: 'structured', rule: -1, step: -1 };
  }
  if (/\btitle\b/i.test(view.text)) {
    const title = scenario.title ?? 'Scripted session';
    // Claude Code asks for {"title": …} in its wording, JSON mode asks by format; the others want the plain title.
    const json = view.wantsJson || /json/i.test(view.text);
    return { reply: { kind: 'text', text: json ? JSON.stringify({ title }) : title, timing: DEFAULT_TIMING }, role: 'title', rule: -1, step: -1 };
  }
  return undefined;
}

/**
 * A side request in JSON mode without a schema (OpenAI json_object, Gemini application/json) gets
 * the script's text as {"text": …}: the client parses the answer, and plain text would not parse.
 */
function asJsonObject(planned: Plan): Plan {
  if (planned.reply.kind !== 'text') return planned;
  return { ...planned, reply: { kind: 'json', value: { text: planned.reply.text }, timing: planned.reply.timing } };
}

/** Decides the reply to a request from its content alone. */
export function plan(scenario: Scenario, view: ConversationView, fallbackCwd?: string): Plan {
  if (isMainConversation(view)) return planFromScript(scenario, view, fallbackCwd);
  const side = planSideRequest(scenario, view);
  if (side) return side;
  const scripted = planFromScript(scenario, view, fallbackCwd);
  return view.wantsJson ? asJsonObject(scripted) : scripted;
}

/** The rule that answers the prompt, and its index; null when no pattern fits and the last rule answers. */
function chooseRule(scenario: Scenario, prompt: string): { rule: Scenario['rules'][number] | undefined; index: number | null } {
  const index = scenario.rules.findIndex((r) => r.match === undefined || new RegExp(r.match, 'i').test(prompt));
  if (index === -1) return { rule: scenario.rules.at(-1), index: null };
  return { rule: scenario.rules[index], index };
}

/** The reply the scenario scripts for the prompt and the step that is due. */
function planFromScript(scenario: Scenario, view: ConversationView, fallbackCwd: string | undefined): Plan {
  const { rule, index: ruleIndex } = chooseRule(scenario, view.prompt);
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
    // A tool search only prepares the step's call: the step's words go with the call itself.
    return { reply: { kind: 'tool', text: call.kind === 'tool_search' ? undefined : step.text, call, timing }, ...where };
  }
  return { reply: { kind: 'text', text: fillText(step.text, step.vars, view), timing }, ...where };
}

/** A text step's words with `{{tool_result}}` and each of its `vars` filled in from the request. */
function fillText(text: string, vars: Readonly<Record<string, string>> | undefined, view: ConversationView): string {
  // Replacer functions: a `$&` or `$'` in a tool's output is text, not a replacement pattern.
  let filled = text.replaceAll('{{tool_result}}', () => view.lastToolResult);
  for (const [name, pattern] of Object.entries(vars ?? {})) {
    const value = new RegExp(pattern).exec(view.text)?.[1] ?? '';
    filled = filled.replaceAll(`{{${name}}}`, () => value);
  }
  return filled;
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
