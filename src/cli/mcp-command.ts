/**
 * `switchboard mcp`: Switchboard's MCP server on stdio, the way agent CLIs start MCP servers. It
 * finds the daemon as every command does (a pane's variables first, so an agent asks as its own
 * pane with its own token) and calls its methods through the client library. Nothing but MCP
 * messages goes to stdout; failures go to stderr.
 *
 * `switchboard mcp install --agent NAME` / `mcp remove --agent NAME`: the user's own configuration
 * of that CLI, changed only on request, saying which file.
 */
import { homedir } from 'node:os';
import { installMcpServer, isMcpConfigAgent, MCP_CONFIG_AGENTS, removeMcpServer, TEAM_ROLE_ENV, type McpConfigAgent } from '../agents/index.js';
import type { RpcCall } from '../surfaces/mcp/rpc-backend.js';
import { parseCommandArgs, UsageError } from './args.js';
import { out, type CliContext } from './context.js';
import type { SwitchboardClient } from '../client/index.js';
import { fileURLToPath } from 'node:url';

/** Time on top of a call's own wait before the client gives up on the daemon's reply. */
const CALL_SLACK_MS = 30_000;

function agentOption(value: unknown): McpConfigAgent {
  if (typeof value !== 'string') throw new UsageError(`--agent is needed: ${MCP_CONFIG_AGENTS.join(', ')}`);
  if (!isMcpConfigAgent(value)) throw new UsageError(`--agent must be one of ${MCP_CONFIG_AGENTS.join(', ')}, not '${value}'`);
  return value;
}

export async function mcpCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { agent: { type: 'string' } });
  const sub = positionals[0];
  if (sub === 'install' || sub === 'remove') {
    const agent = agentOption(values.agent);
    const home = ctx.env.HOME ?? homedir();
    const env = { CODEX_HOME: ctx.env.CODEX_HOME, XDG_CONFIG_HOME: ctx.env.XDG_CONFIG_HOME };
    if (sub === 'install') {
      const entry = fileURLToPath(new URL('./main.js', import.meta.url));
      const done = installMcpServer(agent, home, { command: process.execPath, args: [entry, 'mcp'] }, env);
      out(ctx, done.changed ? `added the switchboard MCP server to ${done.file}` : `${done.file} already has the switchboard MCP server`);
    } else {
      const done = removeMcpServer(agent, home, env);
      out(ctx, done.changed ? `removed the switchboard MCP server from ${done.file}` : `${done.file} has no switchboard MCP server; nothing changed`);
    }
    return 0;
  }
  if (sub !== undefined) throw new UsageError(`unknown mcp command '${sub}'`);
  if (values.agent !== undefined) throw new UsageError('--agent is for mcp install and mcp remove');
  return serveStdio(ctx);
}

/** Serves MCP on stdin/stdout until the CLI that started it closes them. */
async function serveStdio(ctx: CliContext): Promise<number> {
  // Connected at the first call, and again after the connection closed. A CLI starts its MCP
  // servers when it starts and keeps them as long as it runs: the daemon may have been started
  // after the CLI, or restarted since, and a call should find whichever daemon runs then.
  let current: Promise<SwitchboardClient> | undefined;
  const client = (): Promise<SwitchboardClient> => {
    current ??= ctx.connect().then(
      (connected) => {
        connected.onClose(() => {
          current = undefined;
        });
        return connected;
      },
      (err: unknown) => {
        current = undefined;
        throw err;
      },
    );
    return current;
  };
  const call: RpcCall = async (method, params) => {
    const own = (params as { timeout_ms?: unknown }).timeout_ms;
    // A team tool may wait for a worker (bounded by its timeoutMs) or for a person at the risk gate
    // (until the person answers or the run ends): the daemon decides how long, not this client.
    const timeoutMs = method === 'team_tool' ? Infinity : (typeof own === 'number' ? own : 0) + CALL_SLACK_MS;
    return (await client()).request(method, params, { timeoutMs });
  };
  // The MCP SDK is loaded here, not with the CLI: every command (the daemon too) would carry it.
  const [{ StdioServerTransport }, { createMcpServer }, { RpcMcpBackend }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../surfaces/mcp/server.js'),
    import('../surfaces/mcp/rpc-backend.js'),
  ]);
  const paneId = ctx.env.SWITCHBOARD_PANE_ID;
  const backend = new RpcMcpBackend(call, { cwd: process.cwd(), ...(paneId ? { paneId } : {}) });
  const server = createMcpServer(backend);
  // An agent of a team run lists the team tools too (loaded only then: they carry the risk gate).
  const teamRole = ctx.env[TEAM_ROLE_ENV];
  if (teamRole === 'planner' || teamRole === 'worker') {
    (await import('../surfaces/mcp/team-tools.js')).registerTeamTools(server, backend, teamRole);
    // The agent CLI has connected and lists the tools next: its run may brief it now.
    server.server.oninitialized = () => void call('team_mcp_ready', {}).catch(() => undefined);
  }
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    ctx.stdin.once('end', () => resolve());
    ctx.stdin.once('close', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
  if (current) (await current.catch(() => undefined))?.close();
  return 0;
}
