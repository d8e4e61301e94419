import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { SwitchboardError } from '../core/errors.js';
import { describeIssues } from '../core/zod-issues.js';

/**
 * A scenario scripts the model: for the conversation's latest user prompt, the first rule whose
 * `match` pattern fits answers with its steps in order, one step per model request. Which step is
 * due comes from the request itself (how many tool results came back since the prompt), never from
 * counting requests, so retries, title requests and parallel sessions do not shift the script.
 */

const timing = {
  /** Wait this long before answering. */
  delay_ms: z.number().int().min(0).max(600_000).optional(),
  /**
   * Hold the answer until the gate of this name is opened (`ModelServer.openGate`, or POST
   * /__scripted/gates/NAME), then wait `delay_ms`: a turn that lasts exactly as long as a test needs,
   * whatever the machine's speed.
   */
  wait_for: z.string().min(1).max(200).optional(),
  /** Stream text in pieces of this many characters… */
  chunk_chars: z.number().int().min(1).max(100_000).optional(),
  /** …with this pause between pieces. */
  chunk_delay_ms: z.number().int().min(0).max(60_000).optional(),
};

const shellStep = z.strictObject({
  text: z.string().optional(),
  tool: z.literal('shell'),
  command: z.string().min(1),
  description: z.string().optional(),
  /** Codex: ask to run outside the sandbox, which is what makes Codex show an approval prompt. */
  escalate: z.boolean().optional(),
  ...timing,
});

const writeStep = z.strictObject({
  text: z.string().optional(),
  tool: z.literal('write'),
  /** Relative paths are resolved against the agent's working directory. */
  path: z.string().min(1),
  content: z.string(),
  ...timing,
});

const editStep = z.strictObject({
  text: z.string().optional(),
  tool: z.literal('edit'),
  path: z.string().min(1),
  old: z.string().min(1),
  new: z.string(),
  ...timing,
});

/**
 * A call to a tool of an MCP server the client has (Claude Code offers Switchboard's `ask` as
 * mcp__switchboard__ask, OpenCode as switchboard_ask): found among the offered tools by server and
 * tool name, or by name in the server's namespace (Codex: mcp__switchboard). Where the client defers
 * the tool behind a tool search (Codex 0.169's tool_search), the step searches first and calls the
 * tool at the next request; the search is not a step of its own.
 */
const mcpStep = z.strictObject({
  text: z.string().optional(),
  tool: z.literal('mcp'),
  server: z.string().min(1).default('switchboard'),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  ...timing,
});

/**
 * Text; `{{tool_result}}` in it stands for the text of the last tool result the client sent back,
 * and `{{name}}` for the first group of `vars.name`, a regular expression tried on the whole
 * request (a nonce the conversation gave earlier, say); '' when it does not match.
 */
const textStep = z.strictObject({ text: z.string(), vars: z.record(z.string().regex(/^\w+$/), z.string().refine(isValidPattern, 'not a valid regular expression')).optional(), ...timing });

const errorStep = z.strictObject({
  /** 500 server error, 429 rate limit, 529 overloaded (503 where the API has no 529). */
  // One literal of many values, not a union of literals, so a wrong status is reported with the allowed ones.
  error: z.literal([500, 429, 529, 503, 400, 401]),
  message: z.string().optional(),
  ...timing,
});

/** Every kind of step; parsing picks one kind per step by its keys (see stepSchema). */
export type Step = z.infer<typeof shellStep> | z.infer<typeof writeStep> | z.infer<typeof editStep> | z.infer<typeof mcpStep> | z.infer<typeof errorStep> | z.infer<typeof textStep>;

const TOOL_STEPS = { shell: shellStep, write: writeStep, edit: editStep, mcp: mcpStep } as const;
/** The keys that say what kind a step is, in the order they decide it (a tool step may also have text). */
const STEP_KIND_KEYS = ['tool', 'error', 'text'] as const;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const quoted = (names: readonly string[]): string => names.map((n) => `'${n}'`).join(', ');

/** The schema of the step kind `step` names by its keys, or why it names none. */
function schemaForStep(step: Record<string, unknown>): { schema: z.ZodType<Step> } | { problem: string; path: string[] } {
  if ('tool' in step) {
    const tool = step.tool;
    if (typeof tool === 'string' && Object.hasOwn(TOOL_STEPS, tool)) return { schema: TOOL_STEPS[tool as keyof typeof TOOL_STEPS] };
    return { problem: `unknown tool ${JSON.stringify(tool)}; expected one of ${quoted(Object.keys(TOOL_STEPS))}`, path: ['tool'] };
  }
  if ('error' in step) return { schema: errorStep };
  if ('text' in step) return { schema: textStep };
  const keys = Object.keys(step);
  return { problem: `a step needs one of the keys ${quoted(STEP_KIND_KEYS)}${keys.length > 0 ? `; it has ${quoted(keys)}` : ''}`, path: [] };
}

/**
 * One step, validated against the one kind its keys name. A plain union of the kinds would report
 * only "Invalid input" for a bad step; this way the message names the field at fault.
 */
const stepSchema = z.unknown().transform((value, ctx): Step => {
  // Something that is not an object fails the text step's schema with "expected object".
  const chosen = isRecord(value) ? schemaForStep(value) : { schema: textStep };
  if ('problem' in chosen) {
    ctx.addIssue({ code: 'custom', message: chosen.problem, path: chosen.path, input: value });
    return z.NEVER;
  }
  const parsed = chosen.schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ ...issue });
  return z.NEVER;
});

const scenarioSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().optional(),
  /** The title to give when a CLI asks the model to name the session. */
  title: z.string().optional(),
  rules: z
    .array(
      z.strictObject({
        /** A regular expression tried against the latest user prompt; no match pattern matches anything. */
        match: z.string().optional(),
        steps: z.array(stepSchema).min(1),
      }),
    )
    .min(1),
});

export type ToolStep = Extract<Step, { tool: string }>;
export type Scenario = z.infer<typeof scenarioSchema>;

/** Validates a parsed scenario; throws INVALID_PARAMS with every problem named. */
export function parseScenario(data: unknown): Scenario {
  const parsed = scenarioSchema.safeParse(data);
  if (!parsed.success) throw new SwitchboardError('INVALID_PARAMS', `invalid scenario: ${describeIssues(parsed.error)}`);
  for (const rule of parsed.data.rules) {
    if (rule.match !== undefined) {
      try {
        new RegExp(rule.match, 'i');
      } catch (err) {
        throw new SwitchboardError('INVALID_PARAMS', `invalid scenario: bad match pattern ${JSON.stringify(rule.match)}: ${(err as Error).message}`);
      }
    }
  }
  return parsed.data;
}

/** Reads and validates a scenario file (JSON, or YAML when it is named .yaml or .yml). */
export function loadScenario(file: string): Scenario {
  let data: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    // A .yaml/.yml file as YAML; anything else as JSON, whose own errors say more about a JSON file.
    data = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new SwitchboardError('INVALID_PARAMS', `cannot read scenario ${file}: ${(err as Error).message}`);
  }
  return parseScenario(data);
}

/** A scenario that says hello to anything: the default when none is given. */
export const HELLO_SCENARIO: Scenario = {
  name: 'hello',
  title: 'Scripted session',
  rules: [{ steps: [{ text: 'Hello from the scripted model.' }] }],
};

function isValidPattern(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}
