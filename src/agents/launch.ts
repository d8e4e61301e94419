import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SwitchboardError } from '../core/errors.js';
import type { Pane, PaneRegistry } from '../pane/index.js';
import { agentVersion, findAgentBinary } from './binary.js';
import { detectScreen, type Detection } from './detect.js';
import type { AgentProfile, LaunchAdditions, SandboxOptions } from './profile.js';
import { normalizeModelUrl, prepareSandboxHome, SANDBOX_SCRUBBED_ENV } from './sandbox.js';
import type { Dialog, Screens } from './schema.js';
import { pressKeys } from './input.js';

/** How to answer the questions a CLI asks on first run (and sometimes later). */
export interface FirstRunPolicy {
  /** Trust the working directory when asked (the caller chose it). */
  trustFolder: boolean;
  /** Use an API key found in the environment when asked. */
  useEnvApiKey: boolean;
  /** Keep the configured model when a CLI suggests switching. */
  keepCurrentModel: boolean;
}

/**
 * The policy when the caller says nothing. With the user's own configuration, answering "use this
 * API key" is a billing decision the CLI remembers, so it is declined unless asked for; in an
 * isolated HOME every answer stays in that HOME, and the key is the sandbox's own.
 */
export function defaultFirstRunPolicy(sandboxed: boolean): FirstRunPolicy {
  return { trustFolder: true, useEnvApiKey: sandboxed, keepCurrentModel: true };
}

export const DEFAULT_FIRST_RUN_POLICY: FirstRunPolicy = defaultFirstRunPolicy(false);

export interface AgentLaunchOptions {
  cwd: string;
  title?: string;
  /** Variables added on top of the profile's. */
  env?: Record<string, string>;
  /** Arguments added after the profile's interactive ones. */
  args?: string[];
  /**
   * Run from an isolated HOME (an absolute path, created if missing; never the user's own) against
   * a model server (tests, demos, offline use).
   */
  sandbox?: { home: string; modelUrl: string };
  policy?: Partial<FirstRunPolicy>;
  /** Wait this long for the idle prompt (default 90 s). */
  readyTimeoutMs?: number;
  cols?: number;
  rows?: number;
  scrollbackRows?: number;
  /** Where else to look for the program (default: SWITCHBOARD_AGENT_PATH, then Switchboard's own node_modules/.bin). */
  binaryDirs?: string[];
  signal?: AbortSignal;
}

/** A dialog answered during start-up. */
export interface AnsweredDialog {
  id: string;
  decision: 'accept' | 'decline';
  keys: string[];
  atMs: number;
}

export interface AgentStart {
  pane: Pane;
  version: string | undefined;
  /** Time from spawn to a settled idle prompt. */
  readyMs: number;
  dialogs: AnsweredDialog[];
}

/** How long the idle prompt must stay on screen before the agent counts as ready (redraws look idle mid-start). */
export const READY_SETTLE_MS = 400;
/** A dialog still on screen, unchanged, this long after its answer is answered again (the keys were lost). */
export const DIALOG_REPEAT_MS = 3_000;
/** A dialog is answered once it has been on screen this long: keys sent while it draws are lost. */
export const DIALOG_SETTLE_MS = 250;

const packageBin = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '.bin');

/** Directories searched for agent programs after PATH. */
export function defaultBinaryDirs(env: NodeJS.ProcessEnv): string[] {
  const fromEnv = (env.SWITCHBOARD_AGENT_PATH ?? '').split(path.delimiter).filter(Boolean);
  return [...fromEnv, packageBin];
}

/** What `policy` says to a first-run dialog. */
export function decideDialog(dialog: Dialog, policy: FirstRunPolicy): 'accept' | 'decline' {
  switch (dialog.decides) {
    case 'trust_folder':
      return policy.trustFolder ? 'accept' : 'decline';
    case 'use_env_api_key':
      return policy.useEnvApiKey ? 'accept' : 'decline';
    case 'keep_current_model':
      return policy.keepCurrentModel ? 'accept' : 'decline';
    case 'continue':
      return 'accept';
  }
}

/**
 * Starts `profile`'s CLI in a new pane and waits until it sits at its idle prompt. Everything the
 * caller gave is checked before anything is written or spawned.
 */
export async function startAgent(registry: PaneRegistry, profile: AgentProfile, options: AgentLaunchOptions): Promise<AgentStart> {
  const cwd = registry.resolveCwd(options.cwd);
  registry.environmentFor(options.env);
  const sandbox = options.sandbox ? { home: prepareSandboxHome(options.sandbox.home), modelUrl: normalizeModelUrl(options.sandbox.modelUrl) } : undefined;
  const unsetEnv = sandbox ? [...SANDBOX_SCRUBBED_ENV, ...profile.data.sandbox_unset] : [];
  const startEnv = registry.environmentFor(profile.data.env, unsetEnv);
  const additions = sandbox ? seedSandbox(profile, { ...sandbox, cwd, env: startEnv }) : { args: [], env: {} };
  const env = { ...profile.data.env, ...additions.env, ...options.env };
  // Look the program up, and ask its version, with the environment the pane will have.
  const paneEnv = registry.environmentFor(env, unsetEnv);
  const binary = profile.resolveBinary?.(paneEnv) ?? findAgentBinary(profile.data, paneEnv, options.binaryDirs ?? defaultBinaryDirs(paneEnv));
  if (!binary) {
    const hint = profile.data.binary.env ? ` (or set ${profile.data.binary.env})` : '';
    throw new SwitchboardError('SPAWN_FAILED', `${profile.data.display_name ?? profile.data.name} not found: install it so that ${profile.data.binary.names.join(' or ')} is on PATH${hint}`, { agent: profile.data.name });
  }
  options.signal?.throwIfAborted();
  const version = profile.data.version_args ? await agentVersion(binary, profile.data.version_args, paneEnv, options.signal) : undefined;
  // The caller may have gone while the version was asked: start nothing nobody will own.
  options.signal?.throwIfAborted();
  const screens = profile.screensFor(version);
  const pane = registry.create({
    argv: [binary, ...profile.data.interactive_args, ...additions.args, ...(options.args ?? [])],
    cwd,
    title: options.title ?? profile.data.name,
    env,
    unsetEnv,
    cols: options.cols,
    rows: options.rows,
    scrollbackRows: options.scrollbackRows,
    agent: { name: profile.data.name, version },
  });
  try {
    const policy = { ...defaultFirstRunPolicy(sandbox !== undefined), ...options.policy };
    const ready = await awaitReady(pane, screens, policy, options.readyTimeoutMs ?? 90_000, options.signal);
    return { pane, version, ...ready };
  } catch (err) {
    await pane.kill({ graceMs: 1_000 }).catch(() => undefined);
    throw err;
  }
}

/** Seeds the sandbox HOME; a file-system failure is the caller's agent_home, and says so. */
function seedSandbox(profile: AgentProfile, sandbox: SandboxOptions): LaunchAdditions {
  try {
    return profile.prepareSandbox(sandbox);
  } catch (err) {
    if (err instanceof SwitchboardError) throw err;
    throw new SwitchboardError('INVALID_PARAMS', `cannot prepare agent_home ${sandbox.home}: ${(err as Error).message}`, { agent_home: sandbox.home });
  }
}

/** Watches a starting agent: answers dialogs by policy, resolves once the idle prompt holds. */
function awaitReady(pane: Pane, screens: Screens, policy: FirstRunPolicy, timeoutMs: number, signal: AbortSignal | undefined): Promise<{ readyMs: number; dialogs: AnsweredDialog[] }> {
  const started = performance.now();
  const dialogs: AnsweredDialog[] = [];
  const lastAnswered = new Map<string, { at: number; screen: string }>();
  return new Promise((resolve, reject) => {
    let idleSince: number | undefined;
    let dialogSince: { id: string; at: number } | undefined;
    let settleTimer: NodeJS.Timeout | undefined;
    let last: Detection = { kind: 'unknown' };
    const finish = (err?: Error): void => {
      clearTimeout(timer);
      clearTimeout(settleTimer);
      renderSub.dispose();
      exitSub.dispose();
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve({ readyMs: Math.round(performance.now() - started), dialogs });
    };
    const screenTail = (): string => pane.screenLines().filter((l) => l.trim() !== '').slice(-12).join('\n');
    const evaluate = (): void => {
      if (!pane.alive) return;
      last = detectScreen(screens, { lines: pane.screenLines() });
      const now = performance.now();
      if (last.kind === 'dialog' && last.dialog) {
        idleSince = undefined;
        const previous = lastAnswered.get(last.dialog.id);
        const screenNow = pane.screenLines().join('\n');
        // The CLI is still reacting to the answer (a slow restart redraws below the old dialog):
        // answer again only when the screen has sat unchanged, i.e. the keys were lost.
        if (previous !== undefined && screenNow !== previous.screen) {
          lastAnswered.set(last.dialog.id, { at: now, screen: screenNow });
          clearTimeout(settleTimer);
          settleTimer = setTimeout(evaluate, DIALOG_REPEAT_MS + 5);
          return;
        }
        if (previous !== undefined && now - previous.at < DIALOG_REPEAT_MS) {
          // Look again when a repeat is allowed: a still dialog draws nothing new to wake us.
          clearTimeout(settleTimer);
          settleTimer = setTimeout(evaluate, DIALOG_REPEAT_MS - (now - previous.at) + 5);
          return;
        }
        if (dialogSince?.id !== last.dialog.id) dialogSince = { id: last.dialog.id, at: now };
        if (now - dialogSince.at < DIALOG_SETTLE_MS) {
          clearTimeout(settleTimer);
          settleTimer = setTimeout(evaluate, DIALOG_SETTLE_MS - (now - dialogSince.at) + 5);
          return;
        }
        dialogSince = undefined;
        const decision = decideDialog(last.dialog, policy);
        const keys = decision === 'accept' ? last.dialog.accept : last.dialog.decline;
        lastAnswered.set(last.dialog.id, { at: now, screen: pane.screenLines().join('\n') });
        dialogs.push({ id: last.dialog.id, decision, keys, atMs: Math.round(now - started) });
        // A key refused here (the pane exited meanwhile) shows up as no progress, and the timeout says so.
        pressKeys(pane, keys).catch(() => undefined);
        return;
      }
      dialogSince = undefined;
      if (last.kind !== 'idle') {
        idleSince = undefined;
        return;
      }
      idleSince ??= now;
      if (now - idleSince >= READY_SETTLE_MS) {
        finish();
        return;
      }
      clearTimeout(settleTimer);
      settleTimer = setTimeout(evaluate, READY_SETTLE_MS - (now - idleSince) + 5);
    };
    const onAbort = (): void => finish(new SwitchboardError('TIMEOUT', 'cancelled while the agent was starting'));
    const timer = setTimeout(() => {
      finish(new SwitchboardError('TIMEOUT', `the agent did not reach its idle prompt within ${Math.round(timeoutMs / 1000)} s (last seen: ${last.kind}); screen:\n${screenTail()}`));
    }, timeoutMs);
    const renderSub = pane.onRender(evaluate);
    const exitSub = pane.onExit((exit) => {
      const how = exit.signal ?? `code ${exit.exitCode ?? '?'}`;
      finish(new SwitchboardError('SPAWN_FAILED', `the agent exited while starting (${how}); screen:\n${screenTail()}`));
    });
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort);
    evaluate();
  });
}
