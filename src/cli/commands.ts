/**
 * The commands of `switchboard`: each one's usage and help, and where its code is. A command's
 * module is loaded only when that command runs, so `switchboard --help`, `send` or an agent's `lask`
 * does not load the daemon, the agents and the bridge first (a start took 0.45 s of CPU with every
 * module loaded at once).
 */
import type { CliContext } from './context.js';

type Command = (ctx: CliContext, argv: string[]) => Promise<number>;

const ASK_USAGE = [
  'ask TARGET QUESTION...|- [--async] [--timeout S] [--json]   ask the agent in TARGET (pane id or title, or agent name); exit 0 answered, 2 timed out, 1 failed',
  'ask wait|get|cancel JOB [--timeout S] [--json]   the rest of an --async ask; `ask list` lists asks',
];

const MCP_USAGE = [
  'mcp                                      the MCP server on stdio (tools: list_agents, ask, ask_result, send, read, wait), for an agent CLI to start',
  'mcp install|remove --agent claude|codex|gemini|opencode   add Switchboard\'s MCP server to (or take it out of) that CLI\'s own configuration',
];

const EXEC_HELP = [
  'Starts the agent CLI in a terminal of its own (no daemon needed), types the task, answers approvals by',
  'policy and prints the result. TASK is the words after AGENT; - reads it from standard input, --task-file F',
  'from a file (no size limit; one argument is limited to 128 KiB by the OS).',
  '',
  '  --workdir D         where the agent works (default: here)',
  '  --auto-approve      allow shell commands and file changes inside the workdir; ask about network, code from files, deferred work and the rest (docs/approvals.md)',
  '  --policy FILE       an approval policy (YAML or JSON) instead',
  '  --timeout S         longest the task may take; --idle-timeout S: longest without a change on screen',
  '  --json              the result as JSON on stdout (errors too: {"status":"error","error":{"code","message"}})',
  '  --quiet             no progress lines on stderr',
  '',
  'exit status: 0 completed, 1 error, 2 timeout, 3 needs input, 130 cancelled, 64 usage',
];

const RUN_HELP = [
  'Submits a run to the daemon\'s agent bridge and follows its events to the end. PROMPT is the',
  'words after BACKEND, or standard input for -. The folder is --cwd (default: this one; a follow-up\'s or',
  'a resume\'s: its run\'s); it must be',
  'inside the sandbox of the governance policy (~/.switchboard/policy.yaml). Ctrl-C cancels the run.',
  '',
  'options: --cwd D, --mode auto|stdio|pty, --parent RUN (a follow-up in the same conversation),',
  '  --no-keep-alive (end the CLI with the run: no follow-up; by default it stays open for one, see limits.idle_conversations),',
  '  --detach (print the run id and return), --json (events as JSON lines, the run last), --quiet',
  '  (only the agent\'s text), --wall-clock S, --no-output S (tighter limits than the policy\'s),',
  '  --labels a,b (on a cluster controller: only a node with every label takes it; `runs nodes` lists them),',
  '  --node NAME (on a cluster controller: that node takes it),',
  '  --repo NAME [--ref R] [--push] (on a cluster controller: in a git worktree of a node\'s repository NAME, on a',
  '  branch of its own from R (default: the node\'s HEAD), pushed to its origin after the run with --push; --cwd is',
  '  then a folder inside the worktree; a follow-up and a resume go on on the branch),',
  '  --resume RUN (start the CLI again on RUN\'s conversation, by its own resume: an ended run, or a cluster',
  '  run orphaned by its lost node, which then ends cancelled; the folder is RUN\'s unless --cwd is given)',
  '',
  'exit status: 0 completed, 1 failed, 2 failed by a timeout, 130 cancelled, 64 usage',
];

const TEAM_USAGE = 'team run --preset P "goal" | runs | board RUN | answer | send | mark | pause | resume | end | report | presets | preset …   teams of agents (seed 003)';

const TEAM_HELP = [
  'Team runs: one goal, a preset\'s team of agent CLIs in panes, a planner that drives the workers through',
  'tools, a risk gate that holds dangerous text for a person, a live board and a report.',
  '',
  '  team run --preset P [--folder D] [--board] [--markers] "goal"   start a run in D (default: here); --board follows it; --markers: the planner calls by marker lines, not MCP',
  '  team runs [--json]                        the runs kept, the newest first',
  '  team board RUN [--once] [--json]          the live board; on a terminal a/d answer a held text, p pauses, q leaves',
  '  team answer RUN CONFIRMATION allow|deny   let a held text through to its worker, or not',
  '  team send RUN [--worker W] [--confirmed] "text"   to one worker, or to all; risky text needs --confirmed',
  '  team resend RUN CALL                      type a call\'s result into the planner again (undelivered, unconfirmed)',
  '  team mark RUN WORKER done|blocked|needs-input|clear',
  '  team restart RUN WORKER                   restart a stuck worker (or one whose CLI ended), within the preset\'s cap',
  '  team pause|resume RUN                     hold the planner\'s tool calls, or let them go on',
  '  team end RUN [--close-agents]             end the run; its agents stay open unless --close-agents',
  '  team report RUN                           the report, as markdown',
  '  team record RUN [--json]                  the run\'s record from the ledger: every change, call, decision, held text',
  '',
  'Team presets: the roles of a team, each bound to an agent profile, a folder, an approval policy and a',
  'stuck limit; one role plans. Kept sealed (AES-256-GCM) in the daemon\'s home; the key is the file',
  'beside the home (~/.switchboard.key for ~/.switchboard).',
  '',
  '  team presets [--json]                    every preset: yours and the built-in ones',
  '  team preset show NAME [--json]           one preset, every default filled in (JSON)',
  '  team preset validate FILE|-              check a preset file (JSON or YAML); each problem names its field',
  '  team preset save FILE|-                  keep a preset, in place of one of the same name (how one is edited)',
  '  team preset rm NAME                      remove one of yours (a built-in one of that name comes back)',
  '  team preset export NAME [--out FILE]     the preset as JSON, to share',
  '  team preset import FILE|- [--replace]    presets from JSON or YAML: one, a list, or {presets: [...]}',
  '',
  'exit status: 0 done, 1 refused (the error says why), 64 usage',
];

const DOCTOR_HELP = [
  'For each agent CLI (built-in or in your agents.yaml; or only the ones named): where its program is, its',
  'version and whether Switchboard knows it (exact, nearest, none), then a live check against the scripted',
  'model from an isolated HOME in a temporary folder: start to idle, a short prompt, a long one (20 KB, one',
  'line, checked to reach the model whole), an approval (a shell command writing a file in the workdir,',
  'allowed by the auto-approve policy), and back to idle. Prints the states recognized with their evidence',
  'and how long each step took, and one verdict line per CLI.',
  '',
  '  --save DIR          keep every distinct screen (plain and .ansi.txt) and report.json, for a bug report',
  '                      or new detector fixtures',
  '  --json              the report as JSON on stdout',
  '  --size COLSxROWS    the terminal the CLIs run in (default 120x30)',
  '  --timeout S         longest one step may take (default 90)',
  '  --jobs N            CLIs checked at once (default: the cores, at most 4)',
  '',
  'exit status: 0 every CLI found is read right, 1 one is not (or none was found), 64 usage',
];

/** A command: how it runs, its usage line(s), and what `--help` adds below them. */
export const COMMANDS: Record<string, { run: Command; usage: string | string[]; help?: string[] }> = {
  daemon: { run: async (ctx, argv) => (await import('./daemon-commands.js')).daemonCommand(ctx, argv), usage: 'daemon [--port N] [--host H] [--no-socket] [--no-tcp] [--dashboard-port N] [--no-dashboard] [--no-bridge] [--ledger sqlite|postgres://…] [--agent-home DIR --model-url URL] [--agent-sandbox off|auto|bwrap] [--tmux-dialogs answer|off] [--output-memory MIB] [--cluster nats://… --nats-* F] [--log-level L]   run the daemon (the dashboard, the agent bridge and its HTTP API) in the foreground' },
  up: { run: async (ctx, argv) => (await import('./daemon-commands.js')).upCommand(ctx, argv), usage: 'up [--port N] [--cluster nats://… [--nats-creds F|--nats-nkey F] [--nats-ca F] [--nats-cert F --nats-key F]] [...]   start the daemon in the background (with --cluster: a controller, its runs sent to nodes)' },
  node: { run: async (ctx, argv) => (await import('./node-command.js')).nodeCommand(ctx, argv), usage: 'node --controller nats://… [--name N] [--labels a,b] [--repo NAME=PATH|URL …] [--worktree-days D] [--slots N] [--backends shell,claude] [--panes] [--agent-home DIR --model-url URL] [--nats-creds F|--nats-nkey F] [--nats-ca F] [--nats-cert F --nats-key F] [--log-level L]   run a controller\'s runs on this machine (foreground); --panes: the controller may open panes here too, in the policy\'s sandbox' },
  dashboard: { run: async (ctx, argv) => (await import('./daemon-commands.js')).dashboardCommand(ctx, argv), usage: 'dashboard                                print a one-time login link to the web dashboard' },
  down: { run: async (ctx, argv) => (await import('./daemon-commands.js')).downCommand(ctx, argv), usage: 'down                                     stop the daemon and every pane' },
  status: { run: async (ctx, argv) => (await import('./daemon-commands.js')).statusCommand(ctx, argv), usage: 'status [--json]                          show the daemon' },
  new: {
    run: async (ctx, argv) => (await import('./pane-commands.js')).newCommand(ctx, argv),
    usage: [
      'new [--title T] [--cwd D] [--cols N] [--rows N] [--env K=V] [--node N] [-- cmd args...]   --node: on that node of this controller (--cwd a folder there; by default its sandbox\'s first root)',
      'new --agent NAME [--cwd D] [--agent-home DIR --model-url URL] [--no-trust] [--use-api-key] [--grant SCOPE,...] [-- args...]   start an agent CLI, ready at its prompt (its token: read and ask, plus the scopes granted)',
    ],
  },
  ls: { run: async (ctx, argv) => (await import('./pane-commands.js')).lsCommand(ctx, argv), usage: 'ls [--json]                              list panes' },
  send: { run: async (ctx, argv) => (await import('./pane-commands.js')).sendCommand(ctx, argv), usage: 'send PANE TEXT [--enter]                 type text (TEXT - reads stdin)' },
  prompt: { run: async (ctx, argv) => (await import('./pane-commands.js')).promptCommand(ctx, argv), usage: 'prompt PANE TEXT|- [--task-file F]       give an agent a prompt (typed its way, then Enter)' },
  agents: { run: async (ctx, argv) => (await import('./pane-commands.js')).agentsCommand(ctx, argv), usage: 'agents [--json]                          list agent profiles and their programs' },
  paste: { run: async (ctx, argv) => (await import('./pane-commands.js')).pasteCommand(ctx, argv), usage: 'paste PANE TEXT|-                        paste text (bracketed if the program asked)' },
  keys: { run: async (ctx, argv) => (await import('./pane-commands.js')).keysCommand(ctx, argv), usage: 'keys PANE KEY...                         press keys: Enter Esc Tab Up C-c M-x F5 …' },
  read: { run: async (ctx, argv) => (await import('./pane-commands.js')).readCommand(ctx, argv), usage: 'read PANE [--lines N] [--screen] [--ansi] [--join]' },
  wait: { run: async (ctx, argv) => (await import('./pane-commands.js')).waitCommand(ctx, argv), usage: 'wait PANE --text REGEX | --idle MS [--timeout S]   exit 0 met, 2 timeout, 1 exited' },
  kill: { run: async (ctx, argv) => (await import('./pane-commands.js')).killCommand(ctx, argv), usage: 'kill PANE [--signal TERM] [--grace MS] [--rm]' },
  rm: { run: async (ctx, argv) => (await import('./pane-commands.js')).rmCommand(ctx, argv), usage: 'rm PANE...                               kill and forget panes' },
  resize: { run: async (ctx, argv) => (await import('./pane-commands.js')).resizeCommand(ctx, argv), usage: 'resize PANE COLS ROWS' },
  ask: { run: async (ctx, argv) => (await import('./ask-commands.js')).askCommand(ctx, argv), usage: ASK_USAGE },
  mcp: { run: async (ctx, argv) => (await import('./mcp-command.js')).mcpCommand(ctx, argv), usage: MCP_USAGE },
  attach: { run: async (ctx, argv) => (await import('./attach.js')).attachCommand(ctx, argv), usage: 'attach PANE [--detach-key C-]]          this terminal becomes the pane' },
  exec: {
    run: async (ctx, argv) => (await import('./agent-run-commands.js')).execCommand(ctx, argv),
    usage: 'exec AGENT TASK|- [--task-file F] [--workdir D] [--policy FILE | --auto-approve] [--timeout S] [--json] [--quiet] [--agent-home DIR --model-url URL]   drive an agent through a task',
    help: EXEC_HELP,
  },
  run: { run: async (ctx, argv) => (await import('./run-commands.js')).runCommand(ctx, argv), usage: 'run BACKEND PROMPT|- [--cwd D] [--mode auto|stdio|pty] [--parent RUN | --resume RUN] [--labels a,b] [--node NAME] [--repo NAME [--ref R] [--push]] [--detach] [--json] [--quiet]   a run on the agent bridge, followed to its end', help: RUN_HELP },
  runs: {
    run: async (ctx, argv) => (await import('./run-commands.js')).runsCommand(ctx, argv),
    usage: ['runs [--status S] [--backend B] [--limit N] [--json]   the agent bridge\'s runs', 'runs [show] ID [--after N] [--follow] [--json] | runs cancel ID | runs interrupt ID | runs backends | runs nodes   one run and its events; cancel; end its turn, keeping the conversation for --parent; backends and their health; a controller\'s cluster nodes'],
  },
  detect: { run: async (ctx, argv) => (await import('./agent-run-commands.js')).detectCommand(ctx, argv), usage: 'detect --agent NAME [--version V] FILE|-       classify a saved screen capture (JSON)' },
  doctor: { run: async (ctx, argv) => (await import('./doctor-command.js')).doctorCommand(ctx, argv), usage: 'doctor [AGENT...] [--save DIR] [--json] [--size COLSxROWS] [--timeout S] [--jobs N]   check that each agent CLI is found and read right', help: DOCTOR_HELP },
  tmux: { run: async (ctx, argv) => (await import('./tmux/tmux-cli.js')).tmuxCliCommand(ctx, argv), usage: 'tmux [-S PATH | -L NAME] COMMAND [ARGS] [\\; COMMAND …]   a tmux command line, answered as tmux 3.3 with Switchboard panes' },
  herdr: { run: async (ctx, argv) => (await import('./tmux/tmux-cli.js')).herdrCliCommand(ctx, argv), usage: 'herdr pane|workspace|status …                 the herdr-compatible front end (CCB on Windows)' },
  compat: { run: async (ctx, argv) => (await import('./tmux/tmux-cli.js')).compatCommand(ctx, argv), usage: 'compat install [--dir DIR] [--no-compile]       put tmux (and herdr) launchers in a folder for PATH' },
  team: { run: async (ctx, argv) => (await import('./team-commands.js')).teamCommand(ctx, argv), usage: TEAM_USAGE, help: TEAM_HELP },
  ledger: { run: async (ctx, argv) => (await import('./ledger-commands.js')).ledgerCommand(ctx, argv), usage: 'ledger migrate --to postgres://… [--home DIR] [--json]   copy the home\u2019s SQLite ledger (runs, events, asks, team runs) into PostgreSQL; safe to run again' },
  'model-server': { run: async (ctx, argv) => (await import('./model-server-command.js')).modelServerCommand(ctx, argv), usage: 'model-server [--scenario FILE] [--port N] [--log FILE]   a scripted model for offline runs' },
};
