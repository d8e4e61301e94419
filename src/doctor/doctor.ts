/**
 * `switchboard doctor` as a library: for each agent profile (or the ones named), where its program
 * is, its version and how well Switchboard knows it, then a live check against the scripted model
 * (live-check.ts), with a one-line verdict per CLI. The CLI prints it; the daemon or a client can
 * run it the same way later.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { SwitchboardError } from '../core/errors.js';
import { switchboardVersion } from '../core/version.js';
import { defaultBinaryDirs, profileVersion, findAgentBinary, type AgentCatalog, type AgentProfile } from '../agents/index.js';
import { runLiveCheck, type LiveCheck, type StepReport } from './live-check.js';
import type { AgentReport, AgentVerdict, DoctorReport } from './report.js';
import { saveDoctorRun } from './save.js';

/** Profiles that are not agent CLIs: never checked. */
const NOT_AGENTS = ['shell'];
/** Default bound on one step. */
const DEFAULT_STEP_TIMEOUT_MS = 90_000;
/** The size agents run at by default (the pane default `exec` uses too). */
const DEFAULT_DOCTOR_SIZE = { cols: 120, rows: 30 } as const;

export interface DoctorOptions {
  catalog: AgentCatalog;
  /** Profiles to check (default: every one but `shell`). */
  agents?: string[];
  /** The environment the CLIs are looked up and started from. */
  env: NodeJS.ProcessEnv;
  cols?: number;
  rows?: number;
  stepTimeoutMs?: number;
  /** Keep every distinct screen and the report in this folder. */
  saveDir?: string;
  /** CLIs checked at once (default: as many as there are cores, at most 4). */
  jobs?: number;
  longPromptBytes?: number;
  signal?: AbortSignal;
  /** Told as each CLI's steps end, for progress output. */
  onStep?: (agent: string, step: StepReport) => void;
}

const STEP_WORDS: Record<string, string> = { start: 'start', prompt: 'prompt', long_prompt: 'long prompt', approval: 'approval', idle: 'back to idle' };

function seconds(ms: number | null): string {
  return ms === null ? '-' : `${(ms / 1000).toFixed(1)} s`;
}

/** The one-line verdict of a checked CLI. */
function summarize(name: string, version: string | null, support: AgentReport['support'], check: LiveCheck): { verdict: AgentVerdict; summary: string } {
  const who = `${name}${version ? ` ${version}` : ''}`;
  const failed = check.steps.find((s) => s.status === 'fail');
  if (failed) return { verdict: 'fail', summary: `${who} is NOT read right: ${STEP_WORDS[failed.step] ?? failed.step} failed: ${failed.detail}` };
  const unread = check.unread[0];
  if (unread) {
    return { verdict: 'fail', summary: `${who} is NOT read right: during ${STEP_WORDS[unread.step] ?? unread.step}, a screen no pattern reads: "${unread.lines.at(-1)?.trim() ?? ''}"` };
  }
  const times = check.steps.map((s) => `${STEP_WORDS[s.step] ?? s.step} ${seconds(s.durationMs)}`).join(', ');
  return { verdict: 'pass', summary: `${who} is read right (${support?.level ?? 'none'}): ${times}` };
}

/** Checks the agent CLIs; resolves with the report (its `ok` says whether every CLI found was read right). */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const started = performance.now();
  const named = options.agents && options.agents.length > 0 ? options.agents : undefined;
  const profiles: AgentProfile[] = named ? named.map((n) => options.catalog.get(n)) : options.catalog.list().filter((p) => !NOT_AGENTS.includes(p.data.name));
  if (named?.some((n) => NOT_AGENTS.includes(n))) throw new SwitchboardError('INVALID_PARAMS', `'${named.find((n) => NOT_AGENTS.includes(n))}' is not an agent CLI; doctor checks agent CLIs`);
  const cols = options.cols ?? DEFAULT_DOCTOR_SIZE.cols;
  const rows = options.rows ?? DEFAULT_DOCTOR_SIZE.rows;
  const stepTimeoutMs = options.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
  const root = mkdtempSync(path.join(tmpdir(), 'sb-doctor-'));
  const checks = new Map<string, LiveCheck>();
  try {
    const reports = await mapLimited(profiles, options.jobs ?? Math.min(4, availableParallelism()), async (profile): Promise<AgentReport> => {
      const data = profile.data;
      const base = { name: data.name, displayName: data.display_name ?? data.name, builtin: profile.builtin };
      const binary = profile.resolveBinary?.(options.env) ?? findAgentBinary(data, options.env, defaultBinaryDirs(options.env));
      if (!binary) {
        const where = `${data.binary.names.join(' or ')} is not on PATH, in $SWITCHBOARD_AGENT_PATH or in Switchboard's node_modules/.bin${data.binary.env ? ` ($${data.binary.env} is not set)` : ''}`;
        return {
          ...base,
          binary: null,
          version: null,
          support: null,
          // Named on the command line, a missing CLI is a failure; otherwise it is simply not installed.
          verdict: named ? 'fail' : 'not_found',
          summary: `${data.name} not found: ${where}`,
          steps: [],
          states: [],
          unread: [],
          approvals: [],
          notes: [],
          distinctScreens: 0,
        };
      }
      const probed = await profileVersion(data, binary, options.env, { ...(options.signal ? { signal: options.signal } : {}), tempRoot: options.catalog.tempRoot });
      const dir = mkdtempSync(path.join(root, `${data.name}-`));
      const check = await runLiveCheck(profile, {
        catalog: options.catalog,
        env: options.env,
        cols,
        rows,
        stepTimeoutMs,
        dir,
        keepScreens: options.saveDir !== undefined,
        ...(options.longPromptBytes !== undefined ? { longPromptBytes: options.longPromptBytes } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        onStep: (step) => options.onStep?.(data.name, step),
      });
      checks.set(data.name, check);
      const version = check.version ?? probed ?? null;
      const vs = profile.versionSupport(version ?? undefined);
      const support = { level: vs.level, versions: vs.versions, note: vs.note };
      return { ...base, binary, version, support, ...summarize(data.name, version, support, check), steps: check.steps, states: check.states, unread: check.unread, approvals: check.approvals, notes: check.notes, distinctScreens: check.distinctScreens };
    });
    const report: DoctorReport = {
      ok: reports.every((r) => r.verdict !== 'fail') && reports.some((r) => r.verdict === 'pass'),
      switchboard: switchboardVersion(),
      size: { cols, rows },
      stepTimeoutMs,
      durationMs: Math.round(performance.now() - started),
      agents: reports,
    };
    if (options.saveDir !== undefined) saveDoctorRun(options.saveDir, report, checks);
    return report;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Maps `items` with at most `limit` calls running at once, keeping the order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

