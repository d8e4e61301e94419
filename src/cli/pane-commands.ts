import { SwitchboardError } from '../core/errors.js';
import { envOptions, intOption, parseCommandArgs, UsageError } from './args.js';
import { out, withClient, type CliContext } from './context.js';
import path from 'node:path';
import { paneTable, table } from './format.js';
import { resolvePane } from './pane-ref.js';
import { taskArgument } from './task-input.js';
import type { Scope } from '../protocol/scopes.js';

/** The PANE argument (an id, a title, or a unique id prefix). */
function paneArg(positionals: string[]): string {
  const ref = positionals[0];
  if (ref === undefined) throw new UsageError('missing PANE');
  return ref;
}

async function readAllStdin(ctx: CliContext): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The TEXT words after PANE joined with spaces, or standard input when TEXT is `-`. */
async function textArgument(ctx: CliContext, words: string[]): Promise<string> {
  return words.length === 1 && words[0] === '-' ? readAllStdin(ctx) : words.join(' ');
}

/** `new [--title T] [--cwd D] [--cols N] [--rows N] [--env K=V]... [-- cmd args...]` */
export async function newCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals, rest } = parseCommandArgs(argv, {
    title: { type: 'string' },
    cwd: { type: 'string' },
    cols: { type: 'string' },
    rows: { type: 'string' },
    env: { type: 'string', multiple: true },
    json: { type: 'boolean' },
    agent: { type: 'string', short: 'a' },
    'agent-home': { type: 'string' },
    'model-url': { type: 'string' },
    'no-trust': { type: 'boolean' },
    'use-api-key': { type: 'boolean' },
    'ready-timeout': { type: 'string' },
    grant: { type: 'string', multiple: true },
    node: { type: 'string' },
  });
  const words = [...positionals, ...rest];
  // Scopes for the agent's own token beyond read and ask: --grant send,create or --grant send --grant create.
  const grants = ((values.grant as string[] | undefined) ?? []).flatMap((g) => g.split(',')).map((g) => g.trim()).filter(Boolean);
  const agent = values.agent as string | undefined;
  const agentHome = values['agent-home'] as string | undefined;
  if ((agentHome === undefined) !== (values['model-url'] === undefined)) throw new UsageError('--agent-home and --model-url go together');
  if (grants.length > 0 && agent === undefined) throw new UsageError('--grant is for agent panes (a shell you open has every scope)');
  const node = values.node as string | undefined;
  if (node !== undefined && agent !== undefined) throw new UsageError('--node opens a program; an agent on a node starts as a run: switchboard run BACKEND PROMPT --node N --mode pty');
  const cwd = values.cwd as string | undefined;
  // For an agent, the words are extra arguments to it. Otherwise one word is a shell command line
  // (as tmux does) and several are a program and its arguments.
  const command = agent === undefined && words.length === 1 ? words[0] : undefined;
  const argvCmd = agent === undefined && words.length > 1 ? words : undefined;
  const readyTimeout = values['ready-timeout'] === undefined ? undefined : Number(values['ready-timeout']) * 1000;
  if (readyTimeout !== undefined && !(readyTimeout > 0)) throw new UsageError('--ready-timeout needs seconds');
  const created = await withClient(ctx, (c) =>
    c.createPane({
      command,
      argv: argvCmd,
      // A node's folder is the node's to resolve; here, this shell's.
      cwd: node !== undefined ? cwd : path.resolve(cwd ?? process.cwd()),
      node,
      title: values.title as string | undefined,
      cols: intOption(values.cols, 'cols'),
      rows: intOption(values.rows, 'rows'),
      env: envOptions(values.env),
      agent,
      args: agent !== undefined && words.length > 0 ? words : undefined,
      agent_home: agentHome === undefined ? undefined : path.resolve(agentHome),
      model_url: values['model-url'] as string | undefined,
      first_run:
        values['no-trust'] || values['use-api-key']
          ? { ...(values['no-trust'] ? { trust_folder: false } : {}), ...(values['use-api-key'] ? { use_env_api_key: true } : {}) }
          : undefined,
      ready_timeout_ms: readyTimeout === undefined ? undefined : Math.round(readyTimeout),
      grants: grants.length > 0 ? (grants as Scope[]) : undefined,
    }),
  );
  out(ctx, values.json ? JSON.stringify(created) : created.pane_id);
  if (created.agent && !values.json) {
    const answered = created.agent.dialogs.map((d) => `${d.id}: ${d.decision}`).join(', ');
    ctx.stderr.write(`${created.agent.name} ${created.agent.version ?? ''} ready in ${created.agent.ready_ms} ms${answered ? ` (answered ${answered})` : ''}\n`);
  }
  return 0;
}

/** `ls [--json]` */
export async function lsCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, { json: { type: 'boolean' } });
  const { panes } = await withClient(ctx, (c) => c.list());
  if (values.json) out(ctx, JSON.stringify(panes, null, 2));
  else if (panes.length === 0) out(ctx, 'no panes');
  else out(ctx, paneTable(panes));
  return 0;
}

/**
 * `prompt PANE TEXT... | - | --task-file F`: typed the way the pane's agent needs, then Enter. Standard
 * input and files take prompts larger than one argument may be (128 KiB on Linux).
 */
export async function promptCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals, rest } = parseCommandArgs(argv, { 'task-file': { type: 'string' } });
  const ref = paneArg(positionals);
  const words = [...positionals.slice(1), ...rest];
  if (words.length === 0 && values['task-file'] === undefined) throw new UsageError('missing TEXT');
  const text = await taskArgument(ctx, words, values['task-file'] as string | undefined);
  await withClient(ctx, async (c) => c.sendPrompt(await resolvePane(c, ref), text));
  return 0;
}

/** `agents [--json]`: the agent profiles and where their programs are. */
export async function agentsCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, { json: { type: 'boolean' } });
  const { agents, problems } = await withClient(ctx, (c) => c.agents());
  if (values.json) out(ctx, JSON.stringify(agents, null, 2));
  else out(ctx, table(['NAME', 'AGENT', 'KIND', 'PROGRAM'], agents.map((a) => [a.name, a.display_name, a.builtin ? 'built-in' : 'user', a.binary ?? '(not found)'])));
  for (const problem of problems) ctx.stderr.write(`warning: skipped ${problem}\n`);
  return 0;
}

/** `send PANE TEXT... [--enter]` (TEXT `-` reads standard input) */
export async function sendCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals, rest } = parseCommandArgs(argv, { enter: { type: 'boolean', short: 'e' } });
  const ref = paneArg(positionals);
  const words = [...positionals.slice(1), ...rest];
  if (words.length === 0 && !values.enter) throw new UsageError('missing TEXT');
  const text = await textArgument(ctx, words);
  await withClient(ctx, async (c) => c.sendText(await resolvePane(c, ref), text, { addNewline: values.enter === true }));
  return 0;
}

/** `paste PANE TEXT|-` */
export async function pasteCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { positionals, rest } = parseCommandArgs(argv, {});
  const ref = paneArg(positionals);
  const words = [...positionals.slice(1), ...rest];
  if (words.length === 0) throw new UsageError('missing TEXT');
  const text = await textArgument(ctx, words);
  await withClient(ctx, async (c) => c.paste(await resolvePane(c, ref), text));
  return 0;
}

/** `keys PANE KEY...` */
export async function keysCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { positionals, rest } = parseCommandArgs(argv, {});
  const ref = paneArg(positionals);
  const keys = [...positionals.slice(1), ...rest];
  if (keys.length === 0) throw new UsageError('missing KEY (Enter, Esc, Tab, Up, C-c, M-x, F5, or a single character)');
  await withClient(ctx, async (c) => c.sendKeys(await resolvePane(c, ref), keys));
  return 0;
}

/** `read PANE [--lines N] [--screen] [--ansi] [--join] [--json]` */
export async function readCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    lines: { type: 'string', short: 'n' },
    screen: { type: 'boolean' },
    ansi: { type: 'boolean' },
    join: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  const ref = paneArg(positionals);
  if (values.ansi && !values.screen && values.lines !== undefined) throw new UsageError('--ansi applies to the screen: use it with --screen (or alone)');
  await withClient(ctx, async (c) => {
    const id = await resolvePane(c, ref);
    if (values.screen || values.ansi) {
      const screen = await c.getScreen(id, { ansi: values.ansi === true });
      out(ctx, values.json ? JSON.stringify(screen) : screen.text);
      return;
    }
    const text = await c.getText(id, { lines: intOption(values.lines, 'lines', 100), joinWrapped: values.join === true });
    out(ctx, values.json ? JSON.stringify(text) : text.text);
  });
  return 0;
}

/** `wait PANE --text REGEX | --idle MS [--timeout S] [--flags i]`: exit 0 when met, 2 on timeout, 1 if the pane exited. */
export async function waitCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    text: { type: 'string', short: 't' },
    idle: { type: 'string' },
    timeout: { type: 'string' },
    flags: { type: 'string' },
    lines: { type: 'string' },
    json: { type: 'boolean' },
  });
  const ref = paneArg(positionals);
  if (values.text === undefined && values.idle === undefined) throw new UsageError('give --text REGEX, --idle MS, or both');
  const timeoutSeconds = values.timeout === undefined ? 30 : Number(values.timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) throw new UsageError(`--timeout needs seconds, got '${String(values.timeout)}'`);
  const result = await withClient(ctx, async (c) =>
    c.waitFor(await resolvePane(c, ref), {
      pattern: values.text as string | undefined,
      flags: values.flags as string | undefined,
      idleMs: intOption(values.idle, 'idle'),
      timeoutMs: Math.round(timeoutSeconds * 1000),
      lines: intOption(values.lines, 'lines'),
    }),
  );
  if (values.json) out(ctx, JSON.stringify(result));
  else if (result.matched && result.line !== undefined) out(ctx, result.line);
  if (result.matched) return 0;
  if (!values.json) ctx.stderr.write(`switchboard: ${result.reason === 'timeout' ? `timed out after ${timeoutSeconds} s` : `pane ${result.reason}`}\n`);
  return result.reason === 'timeout' ? 2 : 1;
}

/** `kill PANE [--signal SIG] [--grace MS] [--rm]` */
export async function killCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    signal: { type: 'string', short: 's' },
    grace: { type: 'string' },
    rm: { type: 'boolean' },
  });
  const ref = paneArg(positionals);
  const signal = (values.signal as string | undefined)?.toUpperCase().replace(/^SIG/, '');
  await withClient(ctx, async (c) => {
    const id = await resolvePane(c, ref);
    const graceMs = intOption(values.grace, 'grace');
    const result = await c.kill(id, { signal: signal as never, graceMs });
    if (values.rm) await c.remove(id, { graceMs });
    out(ctx, `${id} ${result.signal ? `killed (${result.signal})` : `exited ${result.exit_code ?? '?'}`}${values.rm ? ', removed' : ''}`);
  });
  return 0;
}

/** `rm PANE...` */
export async function rmCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { positionals } = parseCommandArgs(argv, {});
  if (positionals.length === 0) throw new UsageError('missing PANE');
  await withClient(ctx, async (c) => {
    for (const ref of positionals) await c.remove(await resolvePane(c, ref));
  });
  return 0;
}

/** `resize PANE COLS ROWS` */
export async function resizeCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { positionals } = parseCommandArgs(argv, {});
  const [ref, cols, rows] = positionals;
  if (ref === undefined || cols === undefined || rows === undefined) throw new UsageError('missing PANE, COLS or ROWS');
  const c1 = intOption(cols, 'cols');
  const r1 = intOption(rows, 'rows');
  if (c1 === undefined || r1 === undefined) throw new SwitchboardError('INVALID_PARAMS', 'COLS and ROWS must be numbers');
  await withClient(ctx, async (c) => c.resize(await resolvePane(c, ref), c1, r1));
  return 0;
}
