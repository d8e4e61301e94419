/**
 * The team tools in an agent's MCP server (issue 24 item 3): listed when the agent is one of a
 * team run's (its pane says so in SWITCHBOARD_TEAM_ROLE), named as CLIs take tool names
 * (`tabs_list`), with the same parameter schemas the daemon checks them with. Each call goes to
 * the daemon as `team_tool` with the pane's own token: what it may do there is decided by whose
 * pane that is, never by the role this server was told. The answer is the tool's outcome as a
 * marker line's result carries it, so both ways in give the same results.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { teamToolsFor } from '../../api/team-tools.js';
import type { McpBackend } from './backend.js';
import { failure, ok } from './server.js';

/** Adds the tools `member` may call to `server`; nothing when the backend cannot call them. */
export function registerTeamTools(server: McpServer, backend: McpBackend, member: 'planner' | 'worker'): void {
  const call = backend.teamTool?.bind(backend);
  if (!call) return;
  for (const tool of teamToolsFor(member)) {
    server.registerTool(tool.name, { title: tool.name, description: tool.description, inputSchema: tool.params }, async (args): Promise<CallToolResult> => {
      try {
        const outcome = await call({ tool: tool.name, params: args });
        if (outcome.ok) return ok(JSON.stringify(outcome.result), { result: outcome.result });
        return { content: [{ type: 'text', text: `${outcome.error.code}: ${outcome.error.message}` }], isError: true, structuredContent: { error: outcome.error } };
      } catch (err) {
        return failure(err);
      }
    });
  }
}
