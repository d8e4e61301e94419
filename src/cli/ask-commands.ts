/**
 * `switchboard ask TARGET QUESTION` (the question as words, `-`, or standard input), `--async`,
 * and `ask wait|get|cancel JOB`, `ask list`; and the seed's aliases (`cask` Codex, `gask` Gemini,
 * `oask` OpenCode, `lask` Claude Code). Exit codes are CCB's: 0 answered, 2 timed out, 1 failed
 * (or cancelled), 64 a usage mistake; `ask cancel` exits 0 once the ask is cancelled. Called from inside a pane, the ask is that pane's (its token
 * says so), so an async reply is delivered there once it is idle.
 */
import { SwitchboardError } from '../core/errors.js';
import type { AskInfo, Result } from '../protocol/methods.js';
import { intOption, parseCommandArgs, UsageError } from './args.js';
import { out, withClient, type CliContext } from './context.js';
import { EXIT_ERROR } from './failure.js';

export const EXIT_TIMEOUT = 2;
/** How long each wait call asks the daemon to hold (the client waits in these steps until the ask is final). */
const WAIT_STEP_MS = 60_000;
const FINAL = new Set(['done', 'failed', 'timed_out', 'cancelled']);

/** The aliases of the seed, by command name: the agent each asks. */
export const ASK_ALIASES: Readonly<Record<string, string>> = { cask: 'codex', gask: 'gemini', oask: 'opencode', lask: 'claude' };

async function readStdin(ctx: CliContext): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The question: the words, or standard input for `-` or no words from a pipe. */
async function questionOf(ctx: CliContext, words: string[]): Promise<string> {
  const fromStdin = (words.length === 1 && words[0] === '-') || (words.length === 0 && !ctx.stdin.isTTY);
  const question = (fromStdin ? await readStdin(ctx) : words.join(' ')).trim();
  if (question === '') throw new UsageError('missing QUESTION (words, -, or standard input)');
  return question;
}

/** Prints an ask's outcome and returns the exit code. */
function report(ctx: CliContext, ask: AskInfo, json: boolean): number {
  const code = ask.status === 'done' ? 0 : ask.status === 'timed_out' ? EXIT_TIMEOUT : FINAL.has(ask.status) ? EXIT_ERROR : 0;
  if (json) out(ctx, JSON.stringify(ask));
  else if (ask.status === 'done') out(ctx, ask.reply ?? '');
  else if (FINAL.has(ask.status)) ctx.stderr.write(`switchboard ask: ${ask.status.replace('_', ' ')}${ask.error ? `: ${ask.error.code}: ${ask.error.message}` : ''} (ask ${ask.ask_id})\n`);
  else out(ctx, ask.ask_id);
  return code;
}

/** Waits until the ask is final, in steps (each a short call the daemon answers). */
async function untilFinal(wait: (stepMs: number) => Promise<Result<'ask_wait'>>, deadline: number | undefined): Promise<AskInfo> {
  for (;;) {
    const left = deadline === undefined ? WAIT_STEP_MS : Math.max(0, Math.min(WAIT_STEP_MS, deadline - Date.now()));
    const ask = await wait(left);
    if (FINAL.has(ask.status) || (deadline !== undefined && Date.now() >= deadline)) return ask;
  }
}

/** `ask …`, or an alias's `TARGET` fixed to its agent. */
export async function askCommand(ctx: CliContext, argv: string[], fixedTarget?: string): Promise<number> {
  const { values, positionals, rest } = parseCommandArgs(argv, {
    async: { type: 'boolean' },
    timeout: { type: 'string' },
    json: { type: 'boolean' },
  });
  const json = values.json === true;
  const timeoutS = intOption(values.timeout, 'timeout');
  if (timeoutS === 0) throw new UsageError('--timeout needs at least 1 second');
  const timeoutMs = timeoutS === undefined ? undefined : timeoutS * 1000;
  const words = [...positionals, ...rest];
  const sub = fixedTarget === undefined ? words[0] : undefined;
  if (sub === 'list' && words.length === 1) {
    const { asks } = await withClient(ctx, (c) => c.askList());
    if (json) out(ctx, JSON.stringify(asks));
    else for (const a of asks) out(ctx, `${a.ask_id}  ${a.status.padEnd(9)}  ${a.target.agent ?? a.target.title} (${a.target.pane_id})  ${a.question.split('\n')[0]?.slice(0, 60) ?? ''}`);
    return 0;
  }
  if ((sub === 'wait' || sub === 'get' || sub === 'cancel') && words.length === 2 && /^[0-9a-f]{10}$/.test(words[1] ?? '')) {
    const id = words[1] as string;
    const ask = await withClient(ctx, async (c) => {
      if (sub === 'get') return c.askGet(id);
      if (sub === 'cancel') return c.askCancel(id);
      return untilFinal((step) => c.askWait(id, { timeoutMs: step }), timeoutMs === undefined ? undefined : Date.now() + timeoutMs);
    });
    // A cancel that took: the command did what it was asked (0), whatever the ask's own exit code would be.
    if (sub === 'cancel' && ask.status === 'cancelled') {
      if (json) out(ctx, JSON.stringify(ask));
      else out(ctx, `cancelled (ask ${ask.ask_id})`);
      return 0;
    }
    // `get` of an ask still under way prints its status, not its id.
    if (!FINAL.has(ask.status)) {
      if (json) out(ctx, JSON.stringify(ask));
      else out(ctx, `${ask.status} (ask ${ask.ask_id})`);
      return sub === 'wait' ? EXIT_TIMEOUT : 0;
    }
    return report(ctx, ask, json);
  }
  const target = fixedTarget ?? words.shift();
  if (target === undefined || target === '') throw new UsageError('missing TARGET');
  const question = await questionOf(ctx, words);
  const fromPaneId = ctx.env.SWITCHBOARD_PANE_ID;
  // --async: the reply is typed into the asker's pane (when it is an agent's); waiting, it is printed here only.
  const deliver = values.async === true;
  return withClient(ctx, async (c) => {
    // From inside a pane the daemon names the asker after the pane's agent; from outside, "cli".
    const asked = await c.ask(target, question, { wait: false, deliver, timeoutMs, cwd: process.cwd(), ...(fromPaneId ? { fromPaneId } : { fromName: 'cli' }) }).catch((err: unknown) => {
      // Outside any pane, a pane id in the environment that the daemon does not know is stale: ask as nobody's.
      if (fromPaneId && err instanceof SwitchboardError && err.code === 'PANE_NOT_FOUND' && err.details?.pane_id === fromPaneId) return c.ask(target, question, { wait: false, deliver, timeoutMs, cwd: process.cwd(), fromName: 'cli' });
      throw err;
    });
    if (values.async === true) {
      if (json) out(ctx, JSON.stringify(asked));
      else out(ctx, asked.ask_id);
      return 0;
    }
    // The daemon times the ask out itself; the client only waits in steps until it is final.
    const ask = FINAL.has(asked.status) ? asked : await untilFinal((step) => c.askWait(asked.ask_id, { timeoutMs: step }), undefined);
    return report(ctx, ask, json);
  });
}
