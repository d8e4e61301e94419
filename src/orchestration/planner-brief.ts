/**
 * What the planner is told when a team run starts: the goal, its team, its tools and how to call
 * them. A planner whose CLI speaks MCP calls the tools by their MCP names; any other prints marker
 * lines. The brief is typed into the planner and shows on its screen, so it never holds a whole
 * marker line with the run's nonce in it (an echo of the brief would be a call): the example line
 * has a placeholder, and the nonce is given apart from it.
 */
import { TOOL_PREFIX, RESULT_PREFIX } from './marker-lines.js';
import { mcpToolName, TEAM_TOOLS, type TeamToolName } from './tools/team-tools.js';

interface BriefTeamMember {
  id: string;
  role: string;
  agent: string;
  brief: string;
}

export interface PlannerBriefInput {
  goal: string;
  /** The workers open at the start. */
  workers: readonly BriefTeamMember[];
  /** Roles the planner may open more workers of (tabs.create). */
  roles: readonly { name: string; agent: string; brief: string }[];
  /** The planner's own role brief from the preset. */
  plannerBrief: string;
  /** How the planner calls tools. */
  calls: { via: 'mcp' } | { via: 'markers'; nonce: string };
}

/** The brief, as one prompt. */
export function plannerBrief(input: PlannerBriefInput): string {
  const names = Object.keys(TEAM_TOOLS) as TeamToolName[];
  const toolName = (name: TeamToolName): string => (input.calls.via === 'mcp' ? mcpToolName(name) : name);
  const lines = [
    input.plannerBrief.trim() || 'You lead a team of coding agents.',
    '',
    `GOAL: ${input.goal.trim()}`,
    '',
    'YOUR TEAM (each is an agent CLI in a terminal of its own; tabId is its id):',
    ...(input.workers.length > 0 ? input.workers.map((w) => `- ${w.id}: ${w.role} (${w.agent})${w.brief ? `: ${w.brief}` : ''}`) : ['- nobody yet: open workers with tabs.create']),
    '',
    'ROLES YOU MAY OPEN MORE WORKERS OF:',
    ...input.roles.map((r) => `- ${r.name} (${r.agent})${r.brief ? `: ${r.brief}` : ''}`),
    '',
    'TOOLS:',
    ...names.map((name) => `- ${toolName(name)}: ${TEAM_TOOLS[name].description}`),
    '',
    ...howToCall(input.calls),
    '',
    'Plan first: add 2 to 5 tasks with tasks.add (dependsOn where one needs another), give each to a worker with tabs.send, then tabs.wait and tabs.read for their results. Keep run.report_draft up to date (markdown: what each worker did, what changed, what is still open, how to verify). End with run.complete.',
  ];
  return lines.join('\n');
}

function howToCall(calls: PlannerBriefInput['calls']): string[] {
  if (calls.via === 'mcp') return ['Call the tools above through your MCP tools (server "switchboard"). Each answers with a result or an error that says why.'];
  return [
    'CALLING A TOOL: print one line on its own, nothing else on it:',
    `${TOOL_PREFIX} {"id":"<a new id for each call>","method":"<tool>","params":{...},"nonce":"<your nonce>"}`,
    `Your nonce is ${calls.nonce}. Put it in every call; never print it anywhere else and never give it to a worker.`,
    `The result comes back to you as a message starting ${RESULT_PREFIX}, with the same id. Wait for it before you rely on it.`,
  ];
}
