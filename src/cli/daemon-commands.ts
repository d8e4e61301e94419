import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SwitchboardError, isSwitchboardError } from '../core/errors.js';
import { createStreamLogger, type LogLevel } from '../core/logger.js';
import { AGENT_SANDBOX_MODES, Daemon, parseLedgerLocation, parseNatsOptions, DAEMON_NODE_FLAGS, daemonEnv, dropDaemonEnv, TMUX_DIALOGS, type AgentSandboxMode, type TmuxDialogs, DEFAULT_DASHBOARD_PORT, DEFAULT_HOST, DEFAULT_PORT, readRuntimeFile } from '../daemon/index.js';
import { closeInheritedDescriptors, ensurePrivateDir, isProcessRunning, switchboardHome } from '../platform/index.js';
import { intOption, parseCommandArgs, UsageError } from './args.js';
import { out, withClient, type CliContext } from './context.js';
import type { InfoResult } from '../protocol/methods.js';
import { NATS_FILE_OPTIONS, natsFlags } from './node-command.js';

const DAEMON_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'no-socket': { type: 'boolean' },
  'no-tcp': { type: 'boolean' },
  'no-dashboard': { type: 'boolean' },
  'dashboard-port': { type: 'string' },
  'log-level': { type: 'string' },
  'no-bridge': { type: 'boolean' },
  'agent-home': { type: 'string' },
  'model-url': { type: 'string' },
  'agent-sandbox': { type: 'string' },
  'tmux-dialogs': { type: 'string' },
  'output-memory': { type: 'string' },
  ledger: { type: 'string' },
  cluster: { type: 'string' },
  ...NATS_FILE_OPTIONS,
} as const;

/** `--output-memory`'s bounds, in MiB: below 1 every pane gets only the floor share; 64 GiB is a typo's size. */
const OUTPUT_MEMORY_MIB = { min: 1, max: 65_536 } as const;

/**
 * Where the ledger URL travels from `up` to the daemon it starts, and how a user may give it
 * without putting its password on a command line (where `ps` shows it). The daemon takes it out of
 * its environment at once: no pane's program ever sees it.
 */
const LEDGER_VARIABLE = 'SWITCHBOARD_LEDGER';

const LOG_LEVELS: LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

function homeOf(ctx: CliContext): string {
  return ctx.home ?? switchboardHome(ctx.env);
}

/**
 * The daemon's options, checked: `daemon` runs with them, and `up` checks them before it starts a
 * daemon in the background, so a bad value is a usage error there too, not a daemon that died.
 */
function daemonSettings(argv: string[], env: NodeJS.ProcessEnv, ledgerFromEnv = env[LEDGER_VARIABLE]) {
  const { values, positionals } = parseCommandArgs(argv, DAEMON_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const level = (values['log-level'] as string | undefined) ?? 'info';
  if (!LOG_LEVELS.includes(level as LogLevel)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  const agentHome = values['agent-home'] as string | undefined;
  const modelUrl = values['model-url'] as string | undefined;
  if ((agentHome === undefined) !== (modelUrl === undefined)) throw new UsageError('--agent-home and --model-url go together');
  const agentSandbox = (values['agent-sandbox'] as string | undefined) ?? env.SWITCHBOARD_AGENT_SANDBOX ?? 'off';
  if (!(AGENT_SANDBOX_MODES as readonly string[]).includes(agentSandbox)) throw new UsageError(`--agent-sandbox must be one of ${AGENT_SANDBOX_MODES.join(', ')}`);
  const tmuxDialogs = (values['tmux-dialogs'] as string | undefined) ?? env.SWITCHBOARD_TMUX_DIALOGS ?? 'answer';
  if (!(TMUX_DIALOGS as readonly string[]).includes(tmuxDialogs)) throw new UsageError(`--tmux-dialogs must be one of ${TMUX_DIALOGS.join(', ')}`);
  const outputMemoryMiB = intOption(values['output-memory'], 'output-memory');
  if (outputMemoryMiB !== undefined && (outputMemoryMiB < OUTPUT_MEMORY_MIB.min || outputMemoryMiB > OUTPUT_MEMORY_MIB.max)) {
    throw new UsageError(`--output-memory is in MiB, from ${OUTPUT_MEMORY_MIB.min} to ${OUTPUT_MEMORY_MIB.max}`);
  }
  const ledgerValue = (values.ledger as string | undefined) ?? ledgerFromEnv;
  // INVALID_PARAMS for a value that is not a ledger's, the URL shown without its password.
  const ledger = parseLedgerLocation(ledgerValue);
  const clusterUrl = values.cluster as string | undefined;
  const natsFileGiven = Object.keys(NATS_FILE_OPTIONS).some((name) => values[name] !== undefined);
  if (clusterUrl === undefined && natsFileGiven) throw new UsageError('the --nats-* files go with --cluster nats://…');
  // INVALID_PARAMS for a URL or files that will not do (a remote server without TLS and credentials).
  const cluster = clusterUrl === undefined ? undefined : { nats: parseNatsOptions(natsFlags(clusterUrl, values)) };
  if (cluster && values['no-bridge']) throw new UsageError('--cluster needs the agent bridge: leave out --no-bridge');
  return { values, cluster, level: level as LogLevel, agentHome, modelUrl, agentSandbox: agentSandbox as AgentSandboxMode, tmuxDialogs: tmuxDialogs as TmuxDialogs, outputMemoryMiB, ledgerValue, ledger };
}

/** `switchboard daemon`: runs the daemon in the foreground until SIGINT/SIGTERM or `shutdown`. */
export async function daemonCommand(ctx: CliContext, argv: string[]): Promise<number> {
  // First of all: what this process inherited from whoever started it must reach no pane.
  const inherited = closeInheritedDescriptors();
  // And the variables `switchboard up` added for this process only (daemon-flags.ts).
  dropDaemonEnv(process.env);
  if (ctx.env !== process.env) dropDaemonEnv(ctx.env);
  // And the ledger's URL (its password with it), which is this process's alone.
  const ledgerFromEnv = ctx.env[LEDGER_VARIABLE] ?? process.env[LEDGER_VARIABLE];
  delete process.env.SWITCHBOARD_LEDGER;
  if (ctx.env !== process.env) delete ctx.env.SWITCHBOARD_LEDGER;
  const { level, agentHome, modelUrl, agentSandbox, tmuxDialogs, outputMemoryMiB, ledger, values, cluster } = daemonSettings(argv, ctx.env, ledgerFromEnv);
  const logger = createStreamLogger(ctx.stderr, { level });
  if ('problem' in inherited) logger.warn('the descriptors this daemon inherited stay open for its programs', { problem: inherited.problem });
  else if (inherited.marked > 0) logger.info('marked inherited descriptors close-on-exec', { descriptors: inherited.marked });
  const daemon = await Daemon.start({
    bridge: values['no-bridge'] ? false : { ledger, ...(cluster ? { cluster } : {}), ...(agentHome !== undefined && modelUrl !== undefined ? { agentHome: path.resolve(agentHome), modelUrl } : {}) },
    home: homeOf(ctx),
    host: (values.host as string | undefined) ?? DEFAULT_HOST,
    port: values['no-tcp'] ? false : intOption(values.port, 'port', DEFAULT_PORT),
    socket: values['no-socket'] ? false : undefined,
    dashboard: values['no-dashboard'] ? false : { port: intOption(values['dashboard-port'], 'dashboard-port', DEFAULT_DASHBOARD_PORT) },
    agentSandbox,
    tmuxDialogs,
    ...(outputMemoryMiB !== undefined ? { outputMemoryBytes: outputMemoryMiB * 1024 * 1024 } : {}),
    logger,
  });
  // A daemon must outlive a bug in one request or pane: report it and keep serving the others.
  process.on('uncaughtException', (err) => logger.error('uncaught exception', { error: err.stack ?? err.message }));
  process.on('unhandledRejection', (reason) => logger.error('unhandled rejection', { error: String(reason) }));
  let signalled = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signalled += 1;
    if (signalled > 1) {
      // Impatience is not a reason to leave programs running or files behind: kill, clean, exit.
      logger.warn('second signal: killing every pane now and exiting', { signal });
      daemon.abortNow();
      process.exit(130);
    }
    logger.info('signal received', { signal });
    void daemon.close();
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
  const where = [daemon.tcp ? `${daemon.tcp.host}:${daemon.tcp.port}` : undefined, daemon.socketPath].filter(Boolean).join(' and ');
  out(ctx, `switchboard daemon (pid ${process.pid}) listening on ${where}`);
  out(ctx, `token and address: ${path.join(daemon.home, 'daemon.json')} (mode 0600); stop with Ctrl-C or \`switchboard down\``);
  if (daemon.recovered) out(ctx, describeRecovery(daemon.recovered));
  if (daemon.bridge) {
    const interrupted = daemon.bridge.recovered.interrupted.length;
    out(ctx, `agent bridge: runs and asks in ${daemon.bridge.ledgerShown}, policy ${daemon.bridge.policy}${interrupted > 0 ? `; ${interrupted} run(s) left in flight by a daemon that died are now failed (interrupted)` : ''}`);
    if (daemon.bridge.cluster) out(ctx, `cluster: this daemon is its controller; a run of a backend a node has goes to a node (\`switchboard node --controller …\` on each)`);
    if (daemon.dashboard) out(ctx, `HTTP API: http://${daemon.dashboard.host}:${daemon.dashboard.port}/api/v2/ (Authorization: Bearer <token from daemon.json>)`);
  }
  if (daemon.dashboard) out(ctx, `dashboard: open ${daemon.dashboardLoginUrl()} (a one-time link; \`switchboard dashboard\` prints a new one)`);
  await new Promise<void>((resolve) => daemon.onClosed(() => resolve()));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(signal, onSignal);
  return 0;
}

/** `switchboard up`: starts the daemon in the background and waits until it answers. */
export async function upCommand(ctx: CliContext, argv: string[]): Promise<number> {
  // The ledger's URL is handed over in the environment, not on the daemon's command line.
  const { ledgerValue } = daemonSettings(argv, ctx.env);
  const daemonArgs = withoutOption(argv, 'ledger');
  const home = homeOf(ctx);
  const running = readRuntimeFile(home);
  if (running && isProcessRunning(running.pid)) {
    try {
      await withClient(ctx, (c) => c.ping());
      out(ctx, `already running (pid ${running.pid})`);
      return 0;
    } catch {
      // A stale file: start a new daemon.
    }
  }
  ensurePrivateDir(home);
  const logPath = path.join(home, 'daemon.log');
  const log = openSync(logPath, 'a', 0o600);
  try {
    if (statSync(logPath).size > 10 * 1024 * 1024) truncateSync(logPath, 0);
  } catch {
    // Not worth failing over.
  }
  const script = process.argv[1];
  if (!script) throw new SwitchboardError('INTERNAL_ERROR', 'cannot tell which script to start the daemon with');
  const nodeFlags = [...DAEMON_NODE_FLAGS.filter((f) => !process.execArgv.includes(f)), ...process.execArgv];
  const child = spawn(process.execPath, [...nodeFlags, script, '--home', home, 'daemon', ...daemonArgs], {
    detached: true,
    stdio: ['ignore', log, log],
    env: { ...daemonEnv(ctx.env), ...(ledgerValue !== undefined ? { [LEDGER_VARIABLE]: ledgerValue } : {}) },
    windowsHide: true,
  });
  closeSync(log);
  const childPid = child.pid ?? -1;
  // Set from the exit listener; an object so the polling loop below sees the change.
  const state: { exitCode: number | undefined } = { exitCode: undefined };
  child.once('exit', (code) => {
    state.exitCode = code ?? 1;
  });
  child.unref();
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (state.exitCode !== undefined) {
      throw new SwitchboardError('CONNECTION_FAILED', `the daemon exited at start (code ${state.exitCode}): ${lastLine(logPath)}`);
    }
    const info = readRuntimeFile(home);
    if (info?.pid === childPid) {
      try {
        await withClient(ctx, (c) => c.ping());
        const where = [info.port ? `${info.host ?? DEFAULT_HOST}:${info.port}` : undefined, info.socket].filter(Boolean).join(' and ');
        out(ctx, `started (pid ${childPid}), listening on ${where}; log: ${logPath}`);
        const recovered = (await withClient(ctx, (c) => c.info())).recovered;
        if (recovered) out(ctx, describeRecovery(recovered));
        const login = await withClient(ctx, (c) => c.dashboardLogin()).catch(() => undefined);
        if (login) out(ctx, `dashboard: open ${login.url} (a one-time link; \`switchboard dashboard\` prints a new one)`);
        return 0;
      } catch {
        // Not answering yet.
      }
    }
    await sleep(50);
  }
  throw new SwitchboardError('TIMEOUT', `the daemon did not answer within 15 s; see ${logPath}`);
}

/** `argv` without `--name VALUE` / `--name=VALUE`. */
function withoutOption(argv: readonly string[], name: string): string[] {
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? '';
    if (word === `--${name}`) i++;
    else if (!word.startsWith(`--${name}=`)) kept.push(word);
  }
  return kept;
}

/** What a start found of a daemon that died, in a sentence. */
function describeRecovery(found: NonNullable<InfoResult['recovered']>): string {
  const foldersOnly = found.daemon_pids.length === 0 && !found.runtime_file_removed && !found.socket_removed && found.processes === 0;
  if (foldersOnly) return `removed ${found.temp_folders} temporary folder${found.temp_folders === 1 ? '' : 's'} that agents left when the Switchboard process that started them died`;
  const who = found.daemon_pids.length > 0 ? `daemon ${found.daemon_pids.map((p) => `pid ${p}`).join(', ')}` : 'a daemon';
  const parts = [
    found.processes > 0 ? `ended ${found.processes} process${found.processes === 1 ? '' : 'es'} of ${found.panes} pane${found.panes === 1 ? '' : 's'} it left running (their terminals died with it, so they cannot be adopted)` : 'no pane of it was still running',
    ...(found.runtime_file_removed ? ['removed its runtime file'] : []),
    ...(found.socket_removed ? ['removed its socket'] : []),
    ...(found.temp_folders > 0 ? [`removed ${found.temp_folders} temporary folder${found.temp_folders === 1 ? '' : 's'} its agents left`] : []),
    ...(found.survivors.length > 0 ? [`could not end ${found.survivors.join(', ')}`] : []),
  ];
  return `found what ${who} left when it died: ${parts.join('; ')}`;
}

function lastLine(file: string): string {
  try {
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    return lines.at(-1) ?? '';
  } catch {
    return '(no log)';
  }
}

/** `switchboard down`: asks the daemon to shut down and waits until its process is gone. */
export async function downCommand(ctx: CliContext, argv: string[]): Promise<number> {
  parseCommandArgs(argv, {});
  const info = readRuntimeFile(homeOf(ctx));
  try {
    await withClient(ctx, (c) => c.shutdown());
  } catch (err) {
    if (isSwitchboardError(err, 'CONNECTION_FAILED')) {
      out(ctx, 'no daemon running');
      return 0;
    }
    throw err;
  }
  const deadline = Date.now() + 20_000;
  while (info && isProcessRunning(info.pid) && Date.now() < deadline) await sleep(50);
  if (info && isProcessRunning(info.pid)) throw new SwitchboardError('TIMEOUT', `daemon (pid ${info.pid}) is still running after 20 s`);
  out(ctx, `stopped${info ? ` (pid ${info.pid})` : ''}`);
  return 0;
}

/** `switchboard status`: what the daemon says about itself. */
export async function statusCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, { json: { type: 'boolean' } });
  const info = await withClient(ctx, (c) => c.info());
  if (values.json) {
    out(ctx, JSON.stringify(info, null, 2));
    return 0;
  }
  const where = [info.transports.tcp ? `${info.transports.tcp.host}:${info.transports.tcp.port}` : undefined, info.transports.socket].filter(Boolean).join(' and ');
  out(ctx, `switchboard ${info.version}, pid ${info.pid}, up ${Math.round(info.uptime_ms / 1000)} s, on ${where}`);
  const http = info.transports.dashboard;
  if (http) out(ctx, `HTTP API, MCP and dashboard: http://${http.host.includes(':') ? `[${http.host}]` : http.host}:${http.port} (/api/v2, /mcp; \`switchboard dashboard\` for a login link)`);
  else out(ctx, 'HTTP: off (the HTTP API, /mcp and the dashboard come with `switchboard up`)');
  out(ctx, `panes: ${info.panes.alive} running, ${info.panes.total - info.panes.alive} exited`);
  return 0;
}

/** `switchboard dashboard`: prints a fresh one-time login link to the running daemon's dashboard. */
export async function dashboardCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { positionals } = parseCommandArgs(argv, {});
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const { url } = await withClient(ctx, (c) => c.dashboardLogin());
  out(ctx, url);
  return 0;
}
