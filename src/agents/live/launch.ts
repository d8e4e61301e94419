import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SwitchboardError } from '../../core/errors.js';
import { watchScreen, type Pane, type PaneRegistry } from '../../pane/index.js';
import { findAgentBinary, profileVersion } from '../environment/binary.js';
import { detectScreen, type Detection } from '../screen/detect.js';
import type { AgentProfile } from '../profiles/profile.js';
import type { McpServerCommand } from '../profiles/profile.js';
import { agentTempEnv, agentUnsetEnv, checkSandbox, seedSandbox } from '../environment/agent-env.js';
import type { Screens } from '../profiles/schema.js';
import { defaultFirstRunPolicy, type FirstRunPolicy } from './dialog-answer.js';
import { attachLongPromptFolder, prepareLongPromptFolder } from './long-prompt.js';
import { createPrivateTemp } from '../environment/private-temp.js';
import { releaseTempWithPane } from '../environment/pane-temp.js';
import { attachDialogResponder, dialogResponderOf, type AnsweredDialog, type DialogResponder } from './dialog-responder.js';
export { decideDialog, DEFAULT_FIRST_RUN_POLICY, type FirstRunPolicy } from './dialog-answer.js';
export { DIALOG_REPEAT_MS, DIALOG_SETTLE_MS, type AnsweredDialog } from './dialog-responder.js';

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
  sandbox?: { home: string; modelUrl: string; mcp?: McpServerCommand };
  policy?: Partial<FirstRunPolicy>;
  /** Wait this long for the idle prompt (default 90 s). */
  readyTimeoutMs?: number;
  /** How long a menu no profile knows may sit still before the start gives up (default UNKNOWN_DIALOG_PATIENCE_MS). */
  unknownDialogPatienceMs?: number;
  cols?: number;
  rows?: number;
  scrollbackRows?: number;
  /** Where else to look for the program (default: SWITCHBOARD_AGENT_PATH, then Switchboard's own node_modules/.bin). */
  binaryDirs?: string[];
  signal?: AbortSignal;
  /** What the pane's programs may do when they call the daemon back (see CreatePaneOptions.scopes). */
  scopes?: readonly string[];
  /** Where the agent's private temporary folder is made (default: agentTempRoot(), under the Switchboard home). */
  tempRoot?: string;
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
/**
 * A menu no profile pattern knows, unchanged this long during start-up, ends the start with its
 * screen: nothing will answer it (an unknown offer is never guessed at), so waiting longer helps nobody.
 */
const UNKNOWN_DIALOG_PATIENCE_MS = 15_000;

const packageBin = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'node_modules', '.bin');

/** Directories searched for agent programs after PATH. */
export function defaultBinaryDirs(env: NodeJS.ProcessEnv): string[] {
  const fromEnv = (env.SWITCHBOARD_AGENT_PATH ?? '').split(path.delimiter).filter(Boolean);
  return [...fromEnv, packageBin];
}

/** The first-run policy `pane`'s agent was started with (undefined for panes startAgent did not start). */
export function firstRunPolicyOf(pane: Pane): FirstRunPolicy | undefined {
  return dialogResponderOf(pane)?.policy;
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
  const startEnv = registry.environmentFor({ ...profile.data.env }, unsetEnv);
  const additions = sandbox ? seedSandbox(profile, { ...sandbox, cwd, env: startEnv, ...(options.sandbox?.mcp ? { mcp: options.sandbox.mcp } : {}) }) : { args: [], env: {} };
  // Made before the version is asked: OpenCode unpacks its native libraries there for that too.
  const temp = createPrivateTemp(options.tempRoot);
  let pane: Pane;
  let version: string | undefined;
  let prompts: { dir: string; args: string[] } | undefined;
  const policy = { ...defaultFirstRunPolicy(sandbox !== undefined), ...options.policy };
  const trustEnv = policy.trustFolder ? profile.data.trust_env.accept : profile.data.trust_env.decline;
  try {
    // A caller's own TMPDIR wins: it asked for it.
    const env = { ...profile.data.env, ...additions.env, ...trustEnv, ...agentTempEnv(profile, temp), ...options.env };
    // Look the program up, and ask its version, with the environment the pane will have.
    const paneEnv = registry.environmentFor(env, unsetEnv);
    const binary = profile.resolveBinary?.(paneEnv) ?? findAgentBinary(profile.data, paneEnv, options.binaryDirs ?? defaultBinaryDirs(paneEnv));
    if (!binary) {
      const hint = profile.data.binary.env ? ` (or set ${profile.data.binary.env})` : '';
      throw new SwitchboardError('SPAWN_FAILED', `${profile.data.display_name ?? profile.data.name} not found: install it so that ${profile.data.binary.names.join(' or ')} is on PATH${hint}`, { agent: profile.data.name });
    }
    options.signal?.throwIfAborted();
    version = await profileVersion(profile.data, binary, paneEnv, { ...(options.signal ? { signal: options.signal } : {}), tempRoot: options.tempRoot });
    // The caller may have gone while the version was asked: start nothing nobody will own.
    options.signal?.throwIfAborted();
    prompts = prepareLongPromptFolder(profile.data, temp.dir);
    pane = registry.create({
      argv: [binary, ...profile.data.interactive_args, ...additions.args, ...(prompts?.args ?? []), ...(options.args ?? [])],
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
  } catch (err) {
    temp.release();
    throw err;
  }
  // Whatever the agent left there goes when it ends and nothing it started runs any more.
  releaseTempWithPane(registry, pane, temp);
  const screens = profile.screensFor(version);
  if (prompts) attachLongPromptFolder(pane, profile.data, prompts.dir);
  // The pane's dialogs are answered by this policy for as long as it lives, not only now.
  const responder = attachDialogResponder(pane, screens, policy);
  try {
    const ready = await awaitReady(pane, screens, responder, { timeoutMs: options.readyTimeoutMs ?? 90_000, unknownPatienceMs: options.unknownDialogPatienceMs ?? UNKNOWN_DIALOG_PATIENCE_MS }, options.signal);
    return { pane, version, ...ready };
  } catch (err) {
    // The caller never learns the pane's id: a start that failed or was cancelled leaves no pane
    // behind in the registry (the error carries the screen it ended on).
    await registry.remove(pane.id, { graceMs: 1_000 }).catch(() => undefined);
    throw err;
  }
}

/** Watches a starting agent while its responder answers the dialogs; resolves once the idle prompt holds. */
async function awaitReady(pane: Pane, screens: Screens, responder: DialogResponder, limits: { timeoutMs: number; unknownPatienceMs: number }, signal: AbortSignal | undefined): Promise<{ readyMs: number; dialogs: AnsweredDialog[] }> {
  const { timeoutMs, unknownPatienceMs } = limits;
  const started = performance.now();
  let idleSince: number | undefined;
  let last: Detection = { kind: 'unknown' };
  /** Since when an unknown menu has sat unchanged on screen. */
  let unknownSince: { at: number; screen: string } | undefined;
  const screenTail = (): string => pane.screenLines().filter((l) => l.trim() !== '').slice(-12).join('\n');
  const ended = await watchScreen<{ error: SwitchboardError } | { ready: true }>(
    pane,
    {
      check: () => {
        const stuck = responder.stuck;
        if (stuck) return { done: { error: new SwitchboardError('TIMEOUT', `the agent's ${stuck.id} dialog is still on screen after ${stuck.answers} answers; screen:\n${screenTail()}`, { dialog: stuck.id }) } };
        const lines = pane.screenLines();
        last = detectScreen(screens, { lines });
        const now = performance.now();
        const unknownMenu = last.kind === 'dialog' && !last.dialog;
        const screen = lines.join('\n');
        if (!unknownMenu || screen !== unknownSince?.screen) unknownSince = unknownMenu ? { at: now, screen } : undefined;
        if (unknownSince && now - unknownSince.at >= unknownPatienceMs) {
          return { done: { error: new SwitchboardError('SPAWN_FAILED', `the agent stopped at a menu Switchboard does not know (${last.evidence?.line ?? ''}): describe it in the profile's dialogs, or run the CLI once by hand to answer it; screen:\n${screenTail()}`) } };
        }
        if (last.kind !== 'idle' || !responder.clear) {
          idleSince = undefined;
          // An unknown menu is looked at again when its patience runs out, whatever renders.
          return unknownSince ? { recheckInMs: unknownPatienceMs - (now - unknownSince.at) + 5 } : undefined;
        }
        idleSince ??= now;
        if (now - idleSince >= READY_SETTLE_MS) return { done: { ready: true } };
        return { recheckInMs: READY_SETTLE_MS - (now - idleSince) + 5 };
      },
      exited: () => {
        const exit = pane.exit;
        const how = exit?.signal ?? `code ${exit?.exitCode ?? '?'}`;
        return { error: new SwitchboardError('SPAWN_FAILED', `the agent exited while starting (${how}); screen:\n${screenTail()}`) };
      },
      timedOut: () => {
        const what = last.kind === 'dialog' && !last.dialog ? 'a menu Switchboard does not know, waiting for a choice' : last.kind;
        return { error: new SwitchboardError('TIMEOUT', `the agent did not reach its idle prompt within ${Math.round(timeoutMs / 1000)} s (last seen: ${what}); screen:\n${screenTail()}`) };
      },
      cancelled: () => ({ error: new SwitchboardError('TIMEOUT', 'cancelled while the agent was starting') }),
    },
    { timeoutMs, ...(signal ? { signal } : {}), also: [responder.onAnswered] },
  );
  if ('error' in ended) throw ended.error;
  return { readyMs: Math.round(performance.now() - started), dialogs: [...responder.answered] };
}
