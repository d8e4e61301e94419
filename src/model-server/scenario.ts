import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { SwitchboardError } from '../core/errors.js';
import { describeIssues } from '../protocol/methods.js';

/**
 * A scenario scripts the model: for the conversation's latest user prompt, the first rule whose
 * `match` pattern fits answers with its steps in order, one step per model request. Which step is
 * due comes from the request itself (how many tool results came back since the prompt), never from
 * counting requests, so retries, title requests and parallel sessions do not shift the script.
 */

const timing = {
  /** Wait this long before answering. */
  delay_ms: z.number().int().min(0).max(600_000).optional(),
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

const textStep = z.strictObject({ text: z.string(), ...timing });

const errorStep = z.strictObject({
  /** 500 server error, 429 rate limit, 529 overloaded (503 where the API has no 529). */
  error: z.union([z.literal(500), z.literal(429), z.literal(529), z.literal(503), z.literal(400), z.literal(401)]),
  message: z.string().optional(),
  ...timing,
});

export const stepSchema = z.union([shellStep, writeStep, editStep, errorStep, textStep]);

export const scenarioSchema = z.strictObject({
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

export type Step = z.infer<typeof stepSchema>;
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

/** Reads and validates a scenario file. */
export function loadScenario(file: string): Scenario {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
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
