import path from 'node:path';
import { escapeRegExp } from '../core/safe-regex.js';
import type { ConversationView, NamespacedTool } from './conversation.js';
import type { ToolStep } from './scenario.js';

/** A tool call in the shape the client's own tool expects. */
export type ToolCall =
  /** `namespace` for a tool the client groups under one (Codex's MCP tools). */
  | { kind: 'function'; name: string; namespace?: string; args: Record<string, unknown> }
  /** A freeform tool (Codex's apply_patch), whose input is plain text. */
  | { kind: 'custom'; name: string; input: string }
  /** A search for deferred tools, which the client runs and answers with the tools it found (Codex's tool_search). */
  | { kind: 'tool_search'; name: 'tool_search'; args: { query: string; limit: number } };

/** The names each CLI gives its shell, write and edit tools (the first one offered wins). */
const NAMES = {
  shell: ['Bash', 'exec_command', 'shell', 'run_shell_command', 'bash'],
  write: ['Write', 'write_file', 'write'],
  edit: ['Edit', 'replace', 'edit'],
} as const;

function resolvePath(p: string, cwd: string | undefined): string {
  if (path.isAbsolute(p) || !cwd) return p;
  return path.join(cwd, p);
}

function patchAdd(file: string, content: string): string {
  const lines = content.replace(/\n$/, '').split('\n').map((l) => `+${l}`);
  return ['*** Begin Patch', `*** Add File: ${file}`, ...lines, '*** End Patch', ''].join('\n');
}

function patchUpdate(file: string, oldText: string, newText: string): string {
  const minus = oldText.replace(/\n$/, '').split('\n').map((l) => `-${l}`);
  const plus = newText.replace(/\n$/, '').split('\n').map((l) => `+${l}`);
  return ['*** Begin Patch', `*** Update File: ${file}`, '@@', ...minus, ...plus, '*** End Patch', ''].join('\n');
}

/** How many tools a scripted tool search asks for: the one it wants, with room for near matches. */
const TOOL_SEARCH_LIMIT = 8;


/**
 * The call for an MCP tool step. Each CLI names an MCP tool after its server its own way
 * (mcp__server__tool, mcp_server_tool, server__tool, server_tool: the server's name, underscores,
 * the tool's name, perhaps after a prefix), or offers it inside a namespace (Codex: namespace
 * `mcp__server__`, name `tool`), either in the request's tools or loaded by a tool search. When the
 * tool is not offered but a tool search is (Codex 0.169 defers MCP tools behind tool_search), the
 * model searches first (once for each step whose tool is not loaded yet); the
 * client answers with the tools it found, and the next request calls the tool.
 */
function mcpCallFor(step: Extract<ToolStep, { tool: 'mcp' }>, view: ConversationView): ToolCall | undefined {
  const flat = [`mcp__${step.server}__${step.name}`, `${step.server}__${step.name}`, `${step.server}_${step.name}`, step.name];
  // Spelled by structure, so a CLI that joins them another way (Gemini CLI 0.61: mcp_server_tool) is found too.
  const joinedName = new RegExp(`^(?:.*_)?${escapeRegExp(step.server)}_+${escapeRegExp(step.name)}$`);
  const direct = flat.find((n) => view.tools.includes(n)) ?? view.tools.find((n) => joinedName.test(n));
  if (direct) return { kind: 'function', name: direct, args: step.input };
  const joined = (t: NamespacedTool): string => `${t.namespace ?? ''}${t.name}`;
  const inNamespace =
    view.namespaced.find((t) => flat.includes(joined(t))) ??
    // A namespace that names the server, however it is spelled around it (mcp__server__, mcp__server).
    view.namespaced.find((t) => t.name === step.name && t.namespace !== undefined && t.namespace.split(/_{2,}/).includes(step.server));
  if (inNamespace) return { kind: 'function', name: inNamespace.name, ...(inNamespace.namespace !== undefined ? { namespace: inNamespace.namespace } : {}), args: step.input };
  // One search per step: a step whose tool is not loaded yet searches for it (a turn that calls
  // several tools of a server searches several times), and a search that found nothing ends in
  // words, not another search.
  if (view.api === 'openai-responses' && view.tools.includes('tool_search') && view.toolSearches <= view.stepsDone) {
    return { kind: 'tool_search', name: 'tool_search', args: { query: `${step.server} ${step.name}`, limit: TOOL_SEARCH_LIMIT } };
  }
  return undefined;
}

/**
 * Translates a scripted tool step into the call the client understands, or undefined when the client
 * offers no tool of that kind (then the step is answered with text instead).
 */
export function toolCallFor(step: ToolStep, view: ConversationView, fallbackCwd: string | undefined): ToolCall | undefined {
  const cwd = view.cwd ?? fallbackCwd;
  if (step.tool === 'mcp') return mcpCallFor(step, view);
  const offered = (kind: keyof typeof NAMES): string | undefined => NAMES[kind].find((n) => view.tools.includes(n));
  if (step.tool === 'shell') {
    const name = offered('shell');
    if (!name) return undefined;
    const description = step.description ?? 'Run a command';
    switch (name) {
      case 'exec_command': {
        const args: Record<string, unknown> = { cmd: step.command, workdir: cwd ?? '.' };
        if (step.escalate) {
          args.sandbox_permissions = 'require_escalated';
          args.justification = step.description ?? 'The scripted model wants to run this command.';
        }
        return { kind: 'function', name, args };
      }
      case 'shell':
        return { kind: 'function', name, args: { command: ['bash', '-lc', step.command], workdir: cwd } };
      default:
        return { kind: 'function', name, args: { command: step.command, description } };
    }
  }
  if (step.tool === 'write') {
    const name = offered('write');
    const file = resolvePath(step.path, cwd);
    if (name === 'Write' || name === 'write_file') return { kind: 'function', name, args: { file_path: file, content: step.content } };
    if (name === 'write') return { kind: 'function', name, args: { filePath: file, content: step.content } };
    if (view.tools.includes('apply_patch')) return { kind: 'custom', name: 'apply_patch', input: patchAdd(step.path, step.content) };
    return undefined;
  }
  const name = offered('edit');
  const file = resolvePath(step.path, cwd);
  if (name === 'Edit') return { kind: 'function', name, args: { file_path: file, old_string: step.old, new_string: step.new } };
  if (name === 'replace') return { kind: 'function', name, args: { file_path: file, old_string: step.old, new_string: step.new, instruction: 'Apply the scripted edit' } };
  if (name === 'edit') return { kind: 'function', name, args: { filePath: file, oldString: step.old, newString: step.new } };
  if (view.tools.includes('apply_patch')) return { kind: 'custom', name: 'apply_patch', input: patchUpdate(step.path, step.old, step.new) };
  return undefined;
}
