/**
 * Governance, one policy for every surface (seed 004's 统一治理): `~/.switchboard/policy.yaml`.
 * A directory sandbox (the roots a run's folder must be under), the approval policy that already
 * judges tool calls (src/approvals/policy/, its rules and default, extended here by the sandbox),
 * concurrency limits, timeouts and output limits, what the ledger records and keeps, and per-backend
 * overrides of all of these. Validated with zod; every problem is named with where it is
 * (`backends.claude.limits.wall_clock_ms: …`).
 *
 * ```yaml
 * sandbox: { roots: [~/code, /srv/work] }
 * approvals: { rules: [{ decision: deny, tool: shell, command: '^git push' }], default: ask }   # before the built-in rules (replace: true drops them); on_deny: fail (default) | continue
 * limits: { concurrency: 4, wall_clock_ms: 1800000, no_output_ms: 300000, max_output_bytes: 10485760, max_events: 100000, idle_conversations: 4, idle_ms: 600000 }
 * queue: { max_per_caller: 16, max_per_owner: 256, max_prompt_bytes: 67108864 }
 * ledger: { raw_output: false, retention: { max_age_days: 30, max_bytes: 1073741824 } }
 * backends:
 *   claude: { concurrency: 2, limits: { wall_clock_ms: 600000 } }
 * ```
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { parseYaml } from '../core/yaml.js';
import { z } from 'zod';
import { SwitchboardError, errorMessage } from '../core/errors.js';
import { switchboardHome } from '../platform/index.js';
import { AUTO_APPROVE_POLICY, parsePolicy, type ApprovalPolicy } from '../approvals/policy/index.js';
import { policySchema as approvalSchema } from '../approvals/policy/schema.js';
import { MAX_TIME_LIMIT_MS } from '../core/long-timer.js';
import { issueProblems } from '../core/zod-issues.js';
import type { RunLimits } from '../ledger/run-model.js';

export const POLICY_FILE = 'policy.yaml';
/** Runs at once, over every backend, when the policy does not say. */
const DEFAULT_CONCURRENCY = 4;
/** A run's bounds when the policy does not say: half an hour, five silent minutes, 64 MiB, 200,000 events. */
export const DEFAULT_LIMITS: Required<RunLimits> = { wall_clock_ms: 30 * 60_000, no_output_ms: 5 * 60_000, max_output_bytes: 64 * 1024 * 1024, max_events: 200_000 };

/**
 * What the queue of runs waiting for a place holds at most (LIMIT_EXCEEDED past it): runs waiting
 * per caller (a pane's token), runs the owner has waiting, and bytes of prompt held by waiting runs.
 */
/**
 * Agent CLIs kept open between turns for a follow-up, over every backend, when the policy does not
 * say: four (an idle Claude Code holds about 250 MB), each for ten minutes after its last turn.
 */
const DEFAULT_IDLE = { maxConversations: 4, idleMs: 10 * 60_000 } as const;

const DEFAULT_QUEUE_CAPS: QueueCaps = { maxPerCaller: 16, maxPerOwner: 256, maxPromptBytes: 64 * 1024 * 1024 };

interface QueueCaps {
  maxPerCaller: number;
  maxPerOwner: number;
  maxPromptBytes: number;
}

const positive = z.number().int().positive();
/** A time limit: at most 30 days (a longer one is a mistake, and timers are waited in steps past Node's 24.8 days). */
const timeLimit = positive.max(MAX_TIME_LIMIT_MS, `at most ${MAX_TIME_LIMIT_MS} ms (30 days)`);
const limitsSchema = z.strictObject({
  /** Runs at once (global at the top level, per backend under `backends`). */
  concurrency: positive.optional(),
  wall_clock_ms: timeLimit.optional(),
  no_output_ms: timeLimit.optional(),
  max_output_bytes: positive.optional(),
  max_events: positive.optional(),
});
/**
 * The top level's limits: a backend's, and the bounds on conversations kept open for follow-ups,
 * which are one pool over every backend (so only here).
 */
const globalLimitsSchema = limitsSchema.extend({
  /** Conversations (agent CLIs) kept open after their run for a follow-up, over every backend; 0: none (no follow-ups). */
  idle_conversations: z.number().int().nonnegative().optional(),
  /** How long one stays open after its last run. */
  idle_ms: timeLimit.optional(),
});
const sandboxSchema = z.strictObject({
  /** A run's folder must be under one of these (after symlinks are resolved); `~` is the home folder. */
  roots: z.array(z.string().min(1)).min(1),
});
/**
 * An approval policy in the governance file: the rules add to the built-in ones (inside the run's
 * folder allowed, outside it, the network and MCP asked), checked first; `replace: true` drops the
 * built-in rules, so that the file's own rules and default are all there is.
 */
const governanceApprovalSchema = z.strictObject({
  ...approvalSchema.shape,
  replace: z.boolean().optional(),
  /** What a denied tool call does to the run: `fail` ends it `failed (policy)` (the default), `continue` lets the agent go on without it. */
  on_deny: z.enum(['fail', 'continue']).optional(),
});

/** What a denied tool call does to the run. */
type OnDeny = 'fail' | 'continue';

const backendSchema = z.strictObject({
  /** false: runs on this backend are refused. */
  enabled: z.boolean().optional(),
  sandbox: sandboxSchema.optional(),
  approvals: governanceApprovalSchema.optional(),
  limits: limitsSchema.optional(),
});

const governancePolicySchema = z.strictObject({
  version: z.literal(1).optional(),
  sandbox: sandboxSchema.optional(),
  approvals: governanceApprovalSchema.optional(),
  limits: globalLimitsSchema.optional(),
  queue: z
    .strictObject({
      /** Runs one caller (a pane's token) may have waiting for a place. */
      max_per_caller: positive.optional(),
      /** Runs the owner may have waiting. */
      max_per_owner: positive.optional(),
      /** Bytes of prompt (UTF-8) every waiting run together may hold. */
      max_prompt_bytes: positive.optional(),
    })
    .optional(),
  ledger: z
    .strictObject({
      /** Record raw terminal output of PTY runs (off: only structured events are kept). */
      raw_output: z.boolean().optional(),
      retention: z.strictObject({ max_age_days: z.number().positive().optional(), max_bytes: positive.optional() }).optional(),
    })
    .optional(),
  backends: z.record(z.string().min(1), backendSchema).optional(),
});

export type GovernancePolicyInput = z.input<typeof governancePolicySchema>;

/** The policy one backend's runs are held to, every override applied. */
export interface BackendPolicy {
  backend: string;
  enabled: boolean;
  /** Absolute roots, `~` expanded (symlinks are resolved when a path is checked). */
  roots: string[];
  approvals: ApprovalPolicy;
  /** How many of `approvals.rules` come from the file; the built-in rules follow them (unless replaced). */
  ownApprovalRules: number;
  /** What a denied tool call does to the run. */
  onDeny: OnDeny;
  limits: Required<RunLimits>;
  /** This backend's runs at once (null: only the global limit). */
  concurrency: number | null;
  /** Where each part came from, for the ledger's decisions: `policy.yaml`, `backends.claude`, `default`. */
  source: { sandbox: string; approvals: string; limits: string };
}

export interface GovernancePolicy {
  /** Where it was read from, or `default` / `inline`. */
  origin: string;
  /**
   * `sha256:<hex>` of the policy as validated, keys in order: the same rules give the same hash
   * wherever they are read (a controller and its nodes), and every run records it.
   */
  hash: string;
  concurrency: number;
  /** What the queue of waiting runs holds at most. */
  queue: QueueCaps;
  /** Conversations kept open for follow-ups: at most this many over every backend, each this long after its last run. */
  idle: { maxConversations: number; idleMs: number };
  rawOutput: boolean;
  retention: { maxAgeMs?: number; maxBytes?: number };
  /** The policy for one backend (the defaults with every override applied). */
  forBackend(backend: string): BackendPolicy;
}

const expandHome = (p: string, home: string): string => (p === '~' ? home : p.startsWith('~/') || p.startsWith('~\\') ? path.join(home, p.slice(2)) : p);

/** An approval policy and how many of its rules are the file's own (the built-in ones come after). */
interface FileApprovals {
  policy: ApprovalPolicy;
  own: number;
  onDeny: OnDeny;
}

const BUILT_IN_APPROVALS: FileApprovals = { policy: AUTO_APPROVE_POLICY, own: 0, onDeny: 'fail' };

/**
 * The approval policy at `at`, compiled (bad patterns fail here), problems prefixed with where it
 * is; the built-in rules after the file's own unless it says `replace: true`.
 */
function approvalsAt(input: z.infer<typeof governanceApprovalSchema>, at: string): FileApprovals {
  const { replace, on_deny: onDeny = 'fail', ...given } = input;
  try {
    const own = parsePolicy(given);
    if (replace === true) return { policy: own, own: own.rules.length, onDeny };
    return { policy: { rules: [...own.rules, ...AUTO_APPROVE_POLICY.rules], default: own.default }, own: own.rules.length, onDeny };
  } catch (err) {
    const problems = ((err as SwitchboardError).details?.problems as string[] | undefined) ?? [errorMessage(err)];
    throw new SwitchboardError('INVALID_PARAMS', `invalid governance policy: ${problems.map((p) => `${at}.${p}`).join('; ')}`, { problems: problems.map((p) => `${at}.${p}`) });
  }
}

/**
 * Validates a governance policy (from YAML or JSON); throws INVALID_PARAMS naming every problem
 * and where it is. `home` expands `~` (default: the user's home).
 */
export function parseGovernancePolicy(input: unknown, options: { origin?: string; home?: string } = {}): GovernancePolicy {
  const parsed = governancePolicySchema.safeParse(input ?? {});
  if (!parsed.success) {
    const problems = issueProblems(parsed.error, 'key');
    throw new SwitchboardError('INVALID_PARAMS', `invalid governance policy: ${problems.join('; ')}`, { problems });
  }
  const data = parsed.data;
  const home = options.home ?? homedir();
  const globalApprovals = data.approvals ? approvalsAt(data.approvals, 'approvals') : BUILT_IN_APPROVALS;
  const backends = new Map<string, { enabled: boolean; approvals?: FileApprovals; roots?: string[]; limits?: z.infer<typeof limitsSchema> }>();
  for (const [name, b] of Object.entries(data.backends ?? {})) {
    backends.set(name, {
      enabled: b.enabled ?? true,
      ...(b.approvals ? { approvals: approvalsAt(b.approvals, `backends.${name}.approvals`) } : {}),
      ...(b.sandbox ? { roots: b.sandbox.roots.map((r) => path.resolve(expandHome(r, home))) } : {}),
      ...(b.limits ? { limits: b.limits } : {}),
    });
  }
  const globalRoots = (data.sandbox?.roots ?? ['~']).map((r) => path.resolve(expandHome(r, home)));
  const { concurrency: globalConcurrency, idle_conversations: idleConversations, idle_ms: idleMs, ...globalLimits } = data.limits ?? {};
  const origin = options.origin ?? 'inline';
  const retentionInput = data.ledger?.retention;
  return {
    origin,
    hash: policyHash(data),
    concurrency: globalConcurrency ?? DEFAULT_CONCURRENCY,
    queue: {
      maxPerCaller: data.queue?.max_per_caller ?? DEFAULT_QUEUE_CAPS.maxPerCaller,
      maxPerOwner: data.queue?.max_per_owner ?? DEFAULT_QUEUE_CAPS.maxPerOwner,
      maxPromptBytes: data.queue?.max_prompt_bytes ?? DEFAULT_QUEUE_CAPS.maxPromptBytes,
    },
    idle: { maxConversations: idleConversations ?? DEFAULT_IDLE.maxConversations, idleMs: idleMs ?? DEFAULT_IDLE.idleMs },
    rawOutput: data.ledger?.raw_output ?? false,
    retention: {
      ...(retentionInput?.max_age_days !== undefined ? { maxAgeMs: retentionInput.max_age_days * 86_400_000 } : {}),
      ...(retentionInput?.max_bytes !== undefined ? { maxBytes: retentionInput.max_bytes } : {}),
    },
    forBackend(backend) {
      const b = backends.get(backend);
      const { concurrency, ...limits } = b?.limits ?? {};
      return {
        backend,
        enabled: b?.enabled ?? true,
        roots: b?.roots ?? globalRoots,
        approvals: (b?.approvals ?? globalApprovals).policy,
        ownApprovalRules: (b?.approvals ?? globalApprovals).own,
        onDeny: (b?.approvals ?? globalApprovals).onDeny,
        limits: { ...DEFAULT_LIMITS, ...globalLimits, ...limits },
        concurrency: concurrency ?? null,
        source: {
          sandbox: b?.roots ? `backends.${backend}.sandbox` : data.sandbox ? 'sandbox' : 'default',
          approvals: b?.approvals ? `backends.${backend}.approvals` : data.approvals ? 'approvals' : 'default',
          limits: b?.limits ? `backends.${backend}.limits` : data.limits ? 'limits' : 'default',
        },
      };
    },
  };
}

/**
 * The policy file (`policy.yaml` in the Switchboard home, or `file`); the defaults when there is
 * none. Errors name the file and every problem with its field path.
 */
export function loadGovernancePolicy(options: { file?: string; home?: string; env?: NodeJS.ProcessEnv } = {}): GovernancePolicy {
  const file = options.file ?? path.join(switchboardHome(options.env), POLICY_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && options.file === undefined) return parseGovernancePolicy({}, { origin: 'default', ...(options.home ? { home: options.home } : {}) });
    throw new SwitchboardError('INVALID_PARAMS', `cannot read the governance policy ${file}: ${errorMessage(err)}`, { file }, { cause: err });
  }
  let data: unknown;
  try {
    data = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new SwitchboardError('INVALID_PARAMS', `${file}: not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${errorMessage(err)}`, { file }, { cause: err });
  }
  try {
    return parseGovernancePolicy(data, { origin: file, ...(options.home ? { home: options.home } : {}) });
  } catch (err) {
    if (err instanceof SwitchboardError) throw new SwitchboardError('INVALID_PARAMS', `${file}: ${err.message}`, { file, ...err.details }, { cause: err });
    throw err;
  }
}

/** The hash of a validated policy: its JSON with every object's keys sorted, so the text's order and comments do not count. */
function policyHash(data: unknown): string {
  return `sha256:${createHash('sha256').update(JSON.stringify(data, (_key, value: unknown) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : value))).digest('hex')}`;
}
