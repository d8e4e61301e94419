/**
 * `switchboard node --controller nats://…`: this machine runs a controller's runs (issue 26), in
 * the foreground until SIGINT/SIGTERM. Thin over the daemon's `startClusterNode`: the flags checked
 * here, NATS's by parseNatsOptions (a server not on this machine needs TLS and credentials, named
 * by file), everything else there.
 */
import { hostname } from 'node:os';
import path from 'node:path';
import { isSwitchboardError } from '../core/errors.js';
import { createStreamLogger, type LogLevel } from '../core/logger.js';
import { parseNatsOptions, startClusterNode } from '../daemon/index.js';
import { switchboardHome } from '../platform/index.js';
import { intOption, parseCommandArgs, UsageError } from './args.js';
import { out, type CliContext } from './context.js';

/** The `--nats-*` files, as `daemon --cluster` takes them too. */
export const NATS_FILE_OPTIONS = {
  'nats-creds': { type: 'string' },
  'nats-nkey': { type: 'string' },
  'nats-ca': { type: 'string' },
  'nats-cert': { type: 'string' },
  'nats-key': { type: 'string' },
} as const;

const NODE_OPTIONS = {
  controller: { type: 'string' },
  name: { type: 'string' },
  labels: { type: 'string' },
  repo: { type: 'string', multiple: true },
  'worktree-days': { type: 'string' },
  slots: { type: 'string' },
  backends: { type: 'string' },
  panes: { type: 'boolean' },
  'agent-home': { type: 'string' },
  'model-url': { type: 'string' },
  'log-level': { type: 'string' },
  ...NATS_FILE_OPTIONS,
} as const;

const DEFAULT_SLOTS = 4;
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const LOG_LEVELS: LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

/** The NATS options of `url` with the `--nats-*` files in `values`. */
export function natsFlags(url: string, values: Record<string, unknown>): Parameters<typeof parseNatsOptions>[0] {
  const file = (name: keyof typeof NATS_FILE_OPTIONS): string | undefined => values[name] as string | undefined;
  return { url, credsFile: file('nats-creds'), nkeyFile: file('nats-nkey'), caFile: file('nats-ca'), certFile: file('nats-cert'), keyFile: file('nats-key') };
}

/** A comma-separated list, empty entries refused. */
function list(value: unknown, flag: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new UsageError(`--${flag} needs a value`);
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw new UsageError(`--${flag} is a comma-separated list with no empty entry`);
  return items;
}

export async function nodeCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, NODE_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const url = values.controller as string | undefined;
  if (url === undefined) throw new UsageError('--controller nats://host:port is required: the NATS server of the cluster');
  const level = (values['log-level'] as string | undefined) ?? 'info';
  if (!LOG_LEVELS.includes(level as LogLevel)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  const slots = intOption(values.slots, 'slots', DEFAULT_SLOTS) ?? DEFAULT_SLOTS;
  if (slots < 1) throw new UsageError('--slots needs at least 1');
  const name = (values.name as string | undefined) ?? nodeNameOf(hostname());
  const nats = parseNatsOptions(natsFlags(url, values));
  const only = list(values.backends, 'backends');
  const agentHome = values['agent-home'] as string | undefined;
  const modelUrl = values['model-url'] as string | undefined;
  if ((agentHome === undefined) !== (modelUrl === undefined)) throw new UsageError('--agent-home and --model-url go together');
  const repos = repoFlags(values.repo);
  // Days: 0 keeps them for good (intOption refuses what is not a whole number of them).
  const worktreeDays = intOption(values['worktree-days'], 'worktree-days', undefined);
  const logger = createStreamLogger(ctx.stderr, { level: level as LogLevel });
  // Installed before the join, so a node still waiting for a controller leaves cleanly too.
  const stopped = new AbortController();
  const stop = (signal: NodeJS.Signals): void => {
    logger.info('signal received', { signal });
    stopped.abort();
  };
  for (const s of STOP_SIGNALS) process.on(s, stop);
  try {
    let started: Awaited<ReturnType<typeof startClusterNode>>;
    try {
      started = await startClusterNode({ home: ctx.home ?? switchboardHome(ctx.env), nats, name, labels: list(values.labels, 'labels') ?? [], repos, ...(worktreeDays !== undefined ? { worktreeIdleMs: worktreeDays * 24 * 60 * 60 * 1000 } : {}), slots, logger, signal: stopped.signal, openPanes: values.panes === true, ...(only ? { only } : {}), ...(agentHome !== undefined && modelUrl !== undefined ? { agentHome: path.resolve(agentHome), modelUrl } : {}) });
    } catch (err) {
      if (stopped.signal.aborted && isSwitchboardError(err, 'SHUTTING_DOWN')) return 0;
      throw err;
    }
    out(ctx, `switchboard node ${name} (pid ${process.pid}) runs the controller's runs, ${slots} at once, epoch ${started.node.lease.record.epoch}; stop with Ctrl-C`);
    if (!stopped.signal.aborted) await new Promise<void>((resolve) => stopped.signal.addEventListener('abort', () => resolve(), { once: true }));
    await started.close();
    return 0;
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, stop);
  }
}

/** `--repo NAME=PATH|URL`, as often as there are repositories: each name once (the node tells a path from a URL, and takes a path from here). */
function repoFlags(value: unknown): Map<string, string> {
  const repos = new Map<string, string>();
  for (const given of (value as string[] | undefined) ?? []) {
    const at = given.indexOf('=');
    const name = at > 0 ? given.slice(0, at) : '';
    const folder = at > 0 ? given.slice(at + 1) : '';
    if (name === '' || folder === '') throw new UsageError(`--repo takes NAME=PATH or NAME=URL (the name runs give; the repository's top folder here, or a URL this node clones), not ${JSON.stringify(given)}`);
    if (repos.has(name)) throw new UsageError(`--repo ${name} is given twice`);
    repos.set(name, folder);
  }
  return repos;
}

/** The node's default name: the host's first label, made subject-safe; `node` when nothing is left of it. */
export function nodeNameOf(host: string): string {
  const name = (host.split('.')[0] ?? '').replace(/[^A-Za-z0-9_-]/g, '-');
  return name === '' ? 'node' : name;
}
