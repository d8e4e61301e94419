/**
 * A role's approval policy on its agent's approval prompts (issue 24 item 1): when the agent of a
 * team run asks for approval, the prompt is read once it holds still and judged by the role's
 * policy in the agent's folder (the same broker step as `exec --auto-approve`); an allow or a deny
 * is pressed, and what the policy leaves open waits for a person (the board shows the worker as
 * needing input; answer_approval and the dashboard answer it). Every decision is reported.
 */
import { describeSubject, decideApproval, type ApprovalPolicy } from '../approvals/index.js';
import { mcpToolName, TEAM_TOOLS, type TeamToolName } from './tools/team-tools.js';
import { DisposableStore, type Disposable } from '../core/disposable.js';
import { untilEvent } from '../core/until-event.js';
import type { AgentPane } from '../agents/index.js';

/**
 * How long after its answer the same prompt on screen is taken for the answered one still drawn
 * (a loaded machine repaints late) until the screen moves; past it, its keys were lost and it is
 * decided again.
 */
const REASK_MS = 2_000;

/** One approval of a team agent, as the board and the record keep it. */
export interface RoleDecision {
  /** What was asked ("shell echo hi > f.txt"), or why it could not be read. */
  what: string;
  decision: 'allow' | 'deny' | 'ask';
  /** Who decided: the role's policy, or nobody yet (a person is asked). */
  by: string;
  reason: string;
}

export class RoleApprovals implements Disposable {
  private readonly store = new DisposableStore();
  private readonly abort = new AbortController();
  private deciding = false;
  /** What was answered last, and when: the same prompt right after is most often that one, still drawn. */
  private lastAnswered: { what: string; at: number } | undefined;

  constructor(
    private readonly agent: AgentPane,
    private readonly role: string,
    private readonly policy: ApprovalPolicy,
    private readonly context: { workdir: string; home: string },
    private readonly onDecided: (decision: RoleDecision) => void,
  ) {
    this.store.add(agent.onState((change) => change.state === 'waiting_approval' && void this.decide()));
    if (agent.state.state === 'waiting_approval') void this.decide();
  }

  dispose(): void {
    this.abort.abort();
    this.store.dispose();
  }

  /** Decides the prompt on screen, one at a time; a prompt that came while one was decided is decided after it. */
  private async decide(): Promise<void> {
    if (this.deciding) return;
    this.deciding = true;
    const signal = this.abort.signal;
    let decidedId: string | undefined;
    try {
      let approval = await this.agent.settleApproval(signal);
      if (!approval || signal.aborted) return;
      const whatOf = (a: NonNullable<typeof approval>): string => (a.request.subject ? describeSubject(a.request.subject) : 'a prompt that could not be read');
      const last = this.lastAnswered;
      if (last !== undefined && last.what === whatOf(approval) && Date.now() - last.at < REASK_MS) {
        // Decided again only once it has left the screen and come back (a second ask of the same
        // tool comes after the first went), or after REASK_MS (its keys were lost).
        await untilEvent(this.agent.pane.onRender, () => this.agent.state.state !== 'waiting_approval', { timeoutMs: REASK_MS - (Date.now() - last.at), signal });
        approval = await this.agent.settleApproval(signal);
        if (!approval) return;
      }
      decidedId = approval.request.id;
      const outcome = await decideApproval(approval.request, { policy: this.policy, context: this.context, otherwise: 'open' }, signal);
      const what = whatOf(approval);
      if (outcome.decision === 'withdrawn') return;
      if (outcome.decision === 'ask') {
        this.onDecided({ what, decision: 'ask', by: 'nobody yet: a person is asked', reason: outcome.reason });
        return;
      }
      const by = `the ${this.role} role's approval policy`;
      // Reported as decided, before the keys go: what the agent does next (the call it asked for)
      // may end the run before the press is confirmed.
      this.onDecided({ what, decision: outcome.decision, by, reason: outcome.reason });
      await this.agent.answer(outcome.decision, { decidedBy: 'policy', by, approvalId: approval.request.id, prompt: approval.prompt, signal });
      this.lastAnswered = { what, at: Date.now() };
    } catch {
      // The prompt went, or a person answered it first (CONFLICT): nothing is left to decide.
    } finally {
      this.deciding = false;
      const next = this.agent.approval?.request.id;
      if (!signal.aborted && this.agent.state.state === 'waiting_approval' && next !== undefined && next !== decidedId) void this.decide();
    }
  }
}

/**
 * The planner's policy: its role's, with its calls of the team tools allowed first. What those
 * tools may do the run decides (the risk gate, the run's own workers only); a CLI that asks
 * before every MCP call would otherwise stop the planner at each one.
 */
export function plannerPolicy(policy: ApprovalPolicy): ApprovalPolicy {
  return { ...policy, rules: [{ decision: 'allow', tool: 'mcp', command: TEAM_TOOL_PATTERN, reason: "the team's own tools, which the run governs" }, ...policy.rules] };
}

/**
 * A team tool's name as a CLI's approval prompt gives it, always with Switchboard's server: as Codex
 * words it (`switchboard MCP server to run tool "tabs_send"`), as Claude Code does
 * (`switchboard — Tabs Send Tool`), or joined (`mcp__switchboard__tabs_send`). Nothing else: a
 * tool of that name from another server, or a bare name that does not say whose it is, is asked.
 */
const TEAM_TOOL_NAMES = (Object.keys(TEAM_TOOLS) as TeamToolName[]).map((name) => mcpToolName(name));
const worded = (name: string): string => name.split('_').map((word) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`).join(' ');
const TEAM_TOOL_PATTERN = `^(?:mcp_{1,2}switchboard_{1,2}(?:${TEAM_TOOL_NAMES.join('|')})|switchboard MCP server to run tool "(?:${TEAM_TOOL_NAMES.join('|')})"|switchboard — (?:${TEAM_TOOL_NAMES.map(worded).join('|')})(?: Tool)?)$`;
