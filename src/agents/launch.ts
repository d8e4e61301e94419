import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SwitchboardError } from '../core/errors.js';
import type { Pane, PaneRegistry } from '../pane/index.js';
import { agentVersion, findAgentBinary } from './binary.js';
import { detectScreen, type Detection } from './detect.js';
import type { AgentProfile } from './profile.js';
import { agentUnsetEnv, checkSandbox, INTERACTIVE_ENV, seedSandbox } from './agent-env.js';
import type { Screens } from './schema.js';
import { answerDialog, decideDialog, defaultFirstRunPolicy, type FirstRunPolicy } from './dialog-answer.js';
export { decideDialog, defaultFirstRunPolicy, DEFAULT_FIRST_RUN_POLICY, type FirstRunPolicy } from './dialog-answer.js';



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
  /** What the pane's programs may do when they call the daemon back (see CreatePaneOptions.scopes). */
  scopes?: readonly string[];
}

/** A dialog answered during start-up. */
export interface AnsweredDialog {
  id: string;
  decision: 'accept' | 'decline';
  /** The keys pressed (for a `choose` answer, the arrows it took and Enter). */
  keys: string[];
  atMs: number;
  /** Why the answer could not be carried out (the dialog is then answered again once it sits still). */
  error?: string;
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


/** The first-run policy each agent pane was started with: dialogs that open later are answered by it too. */
const policies = new WeakMap<Pane, FirstRunPolicy>();

/** The first-run policy `pane`'s agent was started with (undefined for panes startAgent did not start). */
export function firstRunPolicyOf(pane: Pane): FirstRunPolicy | undefined {
  return policies.get(pane);
}

/**
 * Starts `profile`'s CLI in a new pane and waits until it sits at its idle prompt. Everything the
 * caller gave is checked before anything is written or spawned.
 */
export async function startAgent(registry: PaneRegistry, profile: AgentProfile, options: AgentLaunchOptions): Promise<AgentStart> {
  const cwd = registry.resolveCwd(options.cwd);
  registry.environmentFor(options.env);
  const sandbox = options.sandbox ? checkSandbox(options.sandbox) : undefined;
  const unsetEnv = agentUnsetEnv(profile, { sandboxed: sandbox !== undefined, terminal: true });
  const startEnv = registry.environmentFor({ ...INTERACTIVE_ENV, ...profile.data.env }, unsetEnv);
  const additions = sandbox ? seedSandbox(profile, { ...sandbox, cwd, env: startEnv }) : { args: [], env: {} };
  const env = { ...INTERACTIVE_ENV, ...profile.data.env, ...additions.env, ...options.env };
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
    scopes: options.scopes,
  });
  const policy = { ...defaultFirstRunPolicy(sandbox !== undefined), ...options.policy };
  policies.set(pane, policy);
  try {
    const ready = await awaitReady(pane, screens, policy, options.readyTimeoutMs ?? 90_000, options.signal);
    return { pane, version, ...ready };
  } catch (err) {
    await pane.kill({ graceMs: 1_000 }).catch(() => undefined);
    throw err;
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
    let settled = false;
    const finish = (err?: Error): void => {
      settled = true;
      clearTimeout(timer);
      clearTimeout(settleTimer);
      renderSub.dispose();
      exitSub.dispose();
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve({ readyMs: Math.round(performance.now() - started), dialogs });
    };
    const screenTail = (): string => pane.screenLines().filter((l) => l.trim() !== '').slice(-12).join('\n');
    // While an answer is being pressed, its own keys redraw the screen: look again when it is done.
    let answering = false;
    const evaluate = (): void => {
      if (!pane.alive || answering || settled) return;
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
        const dialog = last.dialog;
        const decision = decideDialog(dialog, policy);
        const answered: AnsweredDialog = { id: dialog.id, decision, keys: [], atMs: Math.round(now - started) };
        dialogs.push(answered);
        answering = true;
        answerDialog(pane, dialog, decision, signal)
          .then((keys) => answered.keys.push(...keys))
          // A key refused (the pane exited meanwhile) or a menu that would not move shows up as no
          // progress: the dialog is answered again once it sits still, and the timeout says so.
          .catch((err: unknown) => (answered.error = (err as Error).message))
          .finally(() => {
            answering = false;
            lastAnswered.set(dialog.id, { at: performance.now(), screen: pane.screenLines().join('\n') });
            evaluate();
          });
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
