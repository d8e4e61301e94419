/** The team tools as agents' MCP servers list them (what `team_tool` then runs, team-operations.ts). */
export { teamToolsFor } from '../orchestration/tools/team-tools.js';
