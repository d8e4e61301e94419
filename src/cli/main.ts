#!/usr/bin/env node
import { switchboardVersion } from '../core/version.js';
import { UsageError } from './args.js';
import { reportFailure, wantsHelp, wantsJson } from './failure.js';
import { createContext, type CliContext } from './context.js';
import { daemonCommand, dashboardCommand, downCommand, statusCommand, upCommand } from './daemon-commands.js';
import { agentsCommand, keysCommand, killCommand, lsCommand, newCommand, pasteCommand, promptCommand, readCommand, resizeCommand, rmCommand, sendCommand, waitCommand } from './pane-commands.js';
import { modelServerCommand } from './model-server-command.js';
import { attachCommand } from './attach.js';
import { askCommand, ASK_USAGE } from './ask-commands.js';
import { mcpCommand, MCP_USAGE } from './mcp-command.js';
import { detectCommand, execCommand, EXEC_HELP } from './agent-run-commands.js';
import { doctorCommand, DOCTOR_HELP } from './doctor-command.js';
import { RUN_HELP, runCommand, runsCommand } from './run-commands.js';
import { compatCommand, herdrCliCommand, tmuxCliCommand } from './tmux/tmux-cli.js';

type Command = (ctx: CliContext, argv: string[]) => Promise<number>;

/** A command: how it runs, its usage line(s), and what `--help` adds below them. */
const COMMANDS: Record<string, { run: Command; usage: string | string[]; help?: string[] }> = {
  daemon: { run: daemonCommand, usage: 'daemon [--port N] [--host H] [--no-socket] [--no-tcp] [--dashboard-port N] [--no-dashboard] [--no-bridge] [--agent-home DIR --model-url URL] [--log-level L]   run the daemon (the dashboard, the agent bridge and its HTTP API) in the foreground' },
  up: { run: upCommand, usage: 'up [--port N] [...]                      start the daemon in the background' },
  dashboard: { run: dashboardCommand, usage: 'dashboard                                print a one-time login link to the web dashboard' },
  down: { run: downCommand, usage: 'down                                     stop the daemon and every pane' },
  status: { run: statusCommand, usage: 'status [--json]                          show the daemon' },
  new: {
    run: newCommand,
    usage: [
      'new [--title T] [--cwd D] [--cols N] [--rows N] [--env K=V] [-- cmd args...]',
      'new --agent NAME [--cwd D] [--agent-home DIR --model-url URL] [--no-trust] [--use-api-key] [--grant SCOPE,...] [-- args...]   start an agent CLI, ready at its prompt (its token: read and ask, plus the scopes granted)',
    ],
  },
  ls: { run: lsCommand, usage: 'ls [--json]                              list panes' },
  send: { run: sendCommand, usage: 'send PANE TEXT [--enter]                 type text (TEXT - reads stdin)' },
  prompt: { run: promptCommand, usage: 'prompt PANE TEXT|- [--task-file F]       give an agent a prompt (typed its way, then Enter)' },
  agents: { run: agentsCommand, usage: 'agents [--json]                          list agent profiles and their programs' },
  paste: { run: pasteCommand, usage: 'paste PANE TEXT|-                        paste text (bracketed if the program asked)' },
  keys: { run: keysCommand, usage: 'keys PANE KEY...                         press keys: Enter Esc Tab Up C-c M-x F5 …' },
  read: { run: readCommand, usage: 'read PANE [--lines N] [--screen] [--ansi] [--join]' },
  wait: { run: waitCommand, usage: 'wait PANE --text REGEX | --idle MS [--timeout S]   exit 0 met, 2 timeout, 1 exited' },
  kill: { run: killCommand, usage: 'kill PANE [--signal TERM] [--grace MS] [--rm]' },
  rm: { run: rmCommand, usage: 'rm PANE...                               kill and forget panes' },
  resize: { run: resizeCommand, usage: 'resize PANE COLS ROWS' },
  ask: { run: (ctx, argv) => askCommand(ctx, argv), usage: ASK_USAGE },
  mcp: { run: mcpCommand, usage: MCP_USAGE },
  attach: { run: attachCommand, usage: 'attach PANE [--detach-key C-]]          this terminal becomes the pane' },
  exec: {
    run: execCommand,
    usage: 'exec AGENT TASK|- [--task-file F] [--workdir D] [--policy FILE | --auto-approve] [--timeout S] [--json] [--quiet] [--agent-home DIR --model-url URL]   drive an agent through a task',
    help: EXEC_HELP,
  },
  run: { run: runCommand, usage: 'run BACKEND PROMPT|- [--cwd D] [--mode auto|stdio|pty] [--parent RUN] [--detach] [--json] [--quiet]   a run on the agent bridge, followed to its end', help: RUN_HELP },
  runs: {
    run: runsCommand,
    usage: ['runs [--status S] [--backend B] [--limit N] [--json]   the agent bridge\'s runs', 'runs [show] ID [--after N] [--follow] [--json] | runs cancel ID | runs backends   one run and its events; cancel; backends and their health'],
  },
  detect: { run: detectCommand, usage: 'detect --agent NAME [--version V] FILE|-       classify a saved screen capture (JSON)' },
  doctor: { run: doctorCommand, usage: 'doctor [AGENT...] [--save DIR] [--json] [--size COLSxROWS] [--timeout S] [--jobs N]   check that each agent CLI is found and read right', help: DOCTOR_HELP },
  tmux: { run: tmuxCliCommand, usage: 'tmux [-S PATH | -L NAME] COMMAND [ARGS] [\\; COMMAND …]   a tmux command line, answered as tmux 3.3 with Switchboard panes' },
  herdr: { run: herdrCliCommand, usage: 'herdr pane|workspace|status …                 the herdr-compatible front end (CCB on Windows)' },
  compat: { run: compatCommand, usage: 'compat install [--dir DIR] [--no-compile]       put tmux (and herdr) launchers in a folder for PATH' },
  'model-server': { run: modelServerCommand, usage: 'model-server [--scenario FILE] [--port N] [--log FILE]   a scripted model for offline runs' },
};

function help(): string {
  const lines = Object.values(COMMANDS).flatMap((c) => (Array.isArray(c.usage) ? c.usage : [c.usage]).map((u) => `  switchboard ${u}`));
  return [
    'switchboard: a local control plane for AI coding agents',
    '',
    'usage:',
    ...lines,
    '',
    'PANE is a pane id, a title, or a unique id prefix. Global option: --home DIR (default $SWITCHBOARD_HOME or ~/.switchboard).',
  ].join('\n');
}

/** Runs the CLI; resolves with the process exit code. */
export async function main(argv: string[]): Promise<number> {
  let home: string | undefined;
  const args = [...argv];
  while (args[0]?.startsWith('--')) {
    const flag = args.shift() as string;
    if (flag === '--help' || flag === '-h') {
      process.stdout.write(`${help()}\n`);
      return 0;
    }
    if (flag === '--version') {
      process.stdout.write(`${switchboardVersion()}\n`);
      return 0;
    }
    if (flag === '--home') home = args.shift();
    else if (flag.startsWith('--home=')) home = flag.slice('--home='.length);
    else return reportFailure(process, new UsageError(`unknown option ${flag}`), { name: undefined, json: wantsJson(argv) });
  }
  const name = args.shift();
  if (name === 'help') {
    process.stdout.write(`${help()}\n`);
    return 0;
  }
  if (name === undefined) return reportFailure(process, new UsageError('missing command'), { name: undefined, json: false });
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) return reportFailure(process, new UsageError(`unknown command '${name}'`), { name: undefined, json: wantsJson(args) });
  if (wantsHelp(args)) {
    const usage = (Array.isArray(command.usage) ? command.usage : [command.usage]).map((u) => `usage: switchboard ${u}`);
    process.stdout.write(`${[...usage, ...(command.help ? ['', ...command.help] : [])].join('\n')}\n`);
    return 0;
  }
  const ctx = createContext({ home });
  try {
    return await command.run(ctx, args);
  } catch (err) {
    return reportFailure(process, err, { name, json: wantsJson(args) });
  }
}

process.exitCode = await main(process.argv.slice(2));
