/**
 * The backends a run service offers by default, the seed's way: stdio first, PTY as the fallback.
 * Every CLI with a structured multi-turn driver (Claude Code, Codex, Gemini CLI, OpenCode) gets it
 * as its stdio backend; every profile (those, Aider, the shell, a user's own) gets `execute()` in a
 * pane as its PTY backend, which a run asks for with `mode: pty` and which is the only one for a CLI
 * without a structured mode. The shell is the exception: a run of it is a command line, run to its
 * exit (command-backend.ts); a shell in a pane has no end of turn to wait for.
 */
import type { Logger } from '../../core/logger.js';
import { AgentCatalog, type AgentPanes } from '../../agents/index.js';
import { conversationAgents, conversationDriverFor } from '../../drivers/conversation-drivers.js';
import type { PaneRegistry } from '../../pane/index.js';
import type { BackendDriver } from './backend-driver.js';
import { CommandBackend, SHELL_BACKEND } from './command-backend.js';
import { ConversationBackend } from './conversation-backend.js';
import { PaneBackend } from './pane-backend.js';

export interface DefaultBackendsOptions {
  catalog?: AgentCatalog;
  binaryDirs?: string[];
  /** Every CLI from an isolated HOME against this model (tests, demos). A function gives each backend its own HOME. */
  sandbox?: { home: string; modelUrl: string } | ((backend: string) => { home: string; modelUrl: string });
  /** Arguments for a backend's CLI, after the profile's own. */
  args?: Record<string, string[]>;
  /** The daemon's panes: a PTY run's pane is one of them (listed, on the dashboard, answered by answer_approval). */
  registry?: PaneRegistry;
  agentPanes?: AgentPanes;
  /** Only these backends (default: every profile). */
  only?: readonly string[];
  /** Leave out the PTY fallback of CLIs that have a structured driver. */
  stdioOnly?: boolean;
  logger?: Logger;
}

export function defaultBackends(options: DefaultBackendsOptions = {}): BackendDriver[] {
  const catalog = options.catalog ?? AgentCatalog.load();
  const structured = new Set(conversationAgents());
  const sandboxFor = (name: string): { home: string; modelUrl: string } | undefined => (typeof options.sandbox === 'function' ? options.sandbox(name) : options.sandbox);
  const out: BackendDriver[] = [];
  for (const name of catalog.list().map((p) => p.data.name)) {
    if (options.only && !options.only.includes(name)) continue;
    const sandbox = sandboxFor(name);
    const args = options.args?.[name];
    if (name === SHELL_BACKEND) {
      out.push(new CommandBackend());
      continue;
    }
    const common = { catalog, ...(sandbox ? { sandbox } : {}), ...(args ? { args } : {}), ...(options.logger ? { logger: options.logger } : {}) };
    if (structured.has(name)) out.push(new ConversationBackend({ driver: conversationDriverFor(name, { catalog, ...(options.binaryDirs ? { binaryDirs: options.binaryDirs } : {}) }), ...common }));
    if (!structured.has(name) || !options.stdioOnly) out.push(new PaneBackend({ tool: name, ...common, ...(options.binaryDirs ? { binaryDirs: options.binaryDirs } : {}), ...(options.registry ? { registry: options.registry } : {}), ...(options.agentPanes ? { agentPanes: options.agentPanes } : {}) }));
  }
  return out;
}
