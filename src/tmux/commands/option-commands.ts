/**
 * Options, environment, hooks and key bindings: set-option / show-options at every scope (-g, -s,
 * -w, -p, -u, -q, -v, -a, -o, -F, -A), set-window-option, set-environment / show-environment,
 * set-hook / show-hooks, bind-key / unbind-key / list-keys, list-commands.
 */
import { COMMANDS, lookupCommand, usageLine } from '../command-table.js';
import { flagValue, hasFlag, parseArgv, printCommand, tokenizeCommandString, type ParsedCommand, CommandParseError, escapeArgument } from '../grammar.js';
import { canonicalKey, isKeyName } from '../keys.js';
import { SESSION_HOOKS, WINDOW_HOOKS, sessionEnvironment, type KeyBinding } from '../model.js';
import { OPTION_TABLE, optionEntry, type OptionEntry } from '../option-table.js';
import { checkValue, OptionError, optionLines, parseOptionName, type OptionStore, type OptionValue } from '../options.js';
import type { TargetState } from '../target.js';
import type { TmuxRuntime } from '../runtime.js';
import { CommandError, type CommandContext } from './context.js';
import type { Command } from './session-commands.js';

type Scope = 'server' | 'session' | 'window' | 'pane';

/** Finds an option by name or unique prefix, as tmux's options_match does. */
function matchOption(text: string): { name: string; index: number | undefined } {
  const { name, index } = parseOptionName(text);
  if (name.startsWith('@')) return { name, index };
  if (optionEntry(name)) return { name, index };
  const matches = OPTION_TABLE.filter((e) => e.name.startsWith(name));
  if (matches.length === 1) return { name: (matches[0] as OptionEntry).name, index };
  throw new CommandError(matches.length > 1 ? `ambiguous option: ${text}` : `invalid option: ${text}`);
}

interface ScopedStore {
  store: OptionStore;
  scope: Scope;
}

/** The store a user option goes to, from the flags (options_scope_from_flags). */
function storeFromFlags(ctx: CommandContext, command: ParsedCommand, window: boolean, target: TargetState): ScopedStore {
  const given = flagValue(command, 't');
  const server = ctx.server;
  if (hasFlag(command, 's')) return { store: server.options, scope: 'server' };
  if (hasFlag(command, 'p')) {
    if (!target.pane) throw new CommandError(given !== undefined ? `no such pane: ${given}` : 'no current pane');
    return { store: target.pane.options, scope: 'pane' };
  }
  if (window || hasFlag(command, 'w')) {
    if (hasFlag(command, 'g')) return { store: server.globalWindowOptions, scope: 'window' };
    if (!target.window) throw new CommandError(given !== undefined ? `no such window: ${given}` : 'no current window');
    return { store: target.window.options, scope: 'window' };
  }
  if (hasFlag(command, 'g')) return { store: server.globalSessionOptions, scope: 'session' };
  if (!target.session) throw new CommandError(given !== undefined ? `no such session: ${given}` : 'no current session');
  return { store: target.session.options, scope: 'session' };
}

/** The store a built-in option goes to, from its table scope (options_scope_from_name). */
function storeFromName(ctx: CommandContext, command: ParsedCommand, window: boolean, target: TargetState, name: string): ScopedStore {
  if (name.startsWith('@')) return storeFromFlags(ctx, command, window, target);
  const entry = optionEntry(name) as OptionEntry;
  const given = flagValue(command, 't');
  const server = ctx.server;
  switch (entry.scope) {
    case 'server':
      return { store: server.options, scope: 'server' };
    case 'session':
      if (hasFlag(command, 'g')) return { store: server.globalSessionOptions, scope: 'session' };
      if (!target.session) throw new CommandError(given !== undefined ? `no such session: ${given}` : 'no current session');
      return { store: target.session.options, scope: 'session' };
    default:
      if (entry.scope === 'pane' && hasFlag(command, 'p')) {
        if (!target.pane) throw new CommandError(given !== undefined ? `no such pane: ${given}` : 'no current pane');
        return { store: target.pane.options, scope: 'pane' };
      }
      if (hasFlag(command, 'g')) return { store: server.globalWindowOptions, scope: 'window' };
      if (!target.window) throw new CommandError(given !== undefined ? `no such window: ${given}` : 'no current window');
      return { store: target.window.options, scope: 'window' };
  }
}

function isGlobalStore(ctx: CommandContext, store: OptionStore): boolean {
  return store === ctx.server.options || store === ctx.server.globalSessionOptions || store === ctx.server.globalWindowOptions;
}

/** Sets, appends or unsets one option (set-option and set-window-option). */
function setOption(ctx: CommandContext, runtime: TmuxRuntime, command: ParsedCommand, window: boolean): void {
  const quiet = hasFlag(command, 'q');
  const target = window ? ctx.targetOrNothing(command, 'window') : ctx.targetOrNothing(command, 'pane');
  const rawName = hasFlag(command, 'F') ? ctx.expand(command.args[0] as string, target) : (command.args[0] as string);
  let matched: { name: string; index: number | undefined };
  try {
    matched = matchOption(rawName);
  } catch (err) {
    if (quiet) return;
    throw err;
  }
  const { name, index } = matched;
  let value = command.args[1];
  if (value !== undefined && hasFlag(command, 'F')) value = ctx.expand(value, target);
  let scoped: ScopedStore;
  try {
    scoped = storeFromName(ctx, command, window, target, name);
  } catch (err) {
    if (quiet) return;
    throw err;
  }
  const { store } = scoped;
  const entry = optionEntry(name);
  const own = store.getOwn(name);
  const inherited = store.get(name);
  const isArray = entry?.type === 'array';
  if (index !== undefined && (name.startsWith('@') || !isArray)) throw new CommandError(`not an array: ${rawName}`);
  if (!hasFlag(command, 'u') && hasFlag(command, 'o')) {
    const already = index === undefined ? own !== undefined : Array.isArray(own) && (own as string[])[index] !== undefined;
    if (already) {
      if (quiet) return;
      throw new CommandError(`already set: ${rawName}`);
    }
  }
  const append = hasFlag(command, 'a');
  if (hasFlag(command, 'u') || hasFlag(command, 'U')) {
    if (own === undefined) return;
    if (index !== undefined && Array.isArray(own)) {
      const next = [...(own as string[])];
      next.splice(index, 1);
      store.set(name, next);
    } else if (!name.startsWith('@') && entry && isGlobalStore(ctx, store)) store.set(name, entry.default);
    else store.delete(name);
    if (hasFlag(command, 'U') && target.window) for (const pane of target.window.panes) pane.options.delete(name);
  } else if (name.startsWith('@')) {
    if (value === undefined) throw new CommandError('empty value');
    const previous = typeof own === 'string' ? own : '';
    store.set(name, append ? previous + value : value);
  } else if (!isArray) {
    try {
      const current = typeof inherited === 'string' ? inherited : undefined;
      let next = checkValue(entry as OptionEntry, value, current);
      if (append && (entry as OptionEntry).type === 'string') next = (current ?? '') + next;
      store.set(name, next);
    } catch (err) {
      if (err instanceof OptionError) throw new CommandError(err.message);
      throw err;
    }
  } else {
    if (value === undefined) throw new CommandError('empty value');
    const current = Array.isArray(own) ? [...(own as string[])] : Array.isArray(inherited) ? [...(inherited as string[])] : [];
    if (index === undefined) store.set(name, append ? [...current, value] : value.split(/[ ,]+/).filter(Boolean));
    else {
      current[index] = append ? (current[index] ?? '') + value : value;
      // Setting past the end leaves holes: they read as empty items.
      const filled: string[] = [];
      for (let i = 0; i < current.length; i++) filled.push(current[i] ?? '');
      store.set(name, filled);
    }
  }
  runtime.optionChanged(name);
}

/** Prints one option (or all of a scope) as show-options does. */
function showOptions(ctx: CommandContext, command: ParsedCommand, window: boolean): void {
  const quiet = hasFlag(command, 'q');
  const target = window ? ctx.targetOrNothing(command, 'window') : ctx.targetOrNothing(command, 'pane');
  const valuesOnly = hasFlag(command, 'v');
  if (command.args.length === 0) {
    let scoped: ScopedStore;
    try {
      scoped = storeFromFlags(ctx, command, window, target);
    } catch (err) {
      if (quiet) return;
      throw err;
    }
    showAll(ctx, command, scoped, valuesOnly);
    return;
  }
  const argument = ctx.expand(command.args[0] as string, target);
  let matched: { name: string; index: number | undefined };
  try {
    matched = matchOption(argument);
  } catch (err) {
    if (quiet) return;
    throw err;
  }
  let scoped: ScopedStore;
  try {
    scoped = storeFromName(ctx, command, window, target, matched.name);
  } catch (err) {
    if (quiet) return;
    throw err;
  }
  let value: OptionValue | undefined = scoped.store.getOwn(matched.name);
  let inherited = false;
  if (value === undefined && hasFlag(command, 'A')) {
    value = scoped.store.get(matched.name);
    inherited = value !== undefined;
  }
  if (value === undefined) {
    if (matched.name.startsWith('@') && !quiet) throw new CommandError(`invalid option: ${argument}`);
    return;
  }
  for (const line of formatOption(matched.name, value, valuesOnly, inherited, matched.index)) ctx.print(line);
}

/** Strings (and user options) are escaped; numbers, flags, choices and keys are printed as they are. */
function formatOption(name: string, value: OptionValue, valuesOnly: boolean, inherited: boolean, index?: number): string[] {
  const entry = optionEntry(name);
  const escaped = name.startsWith('@') || entry === undefined || entry.type === 'string' || entry.type === 'style' || entry.type === 'array';
  if (escaped || typeof value !== 'string') return optionLines(name, value, { valuesOnly, inherited, index });
  return [valuesOnly ? value : `${name}${inherited ? '*' : ''} ${value}`];
}

function showAll(ctx: CommandContext, command: ParsedCommand, scoped: ScopedStore, valuesOnly: boolean): void {
  const { store, scope } = scoped;
  const names = store.names();
  for (const name of names.filter((n) => n.startsWith('@'))) for (const line of formatOption(name, store.getOwn(name) as OptionValue, valuesOnly, false)) ctx.print(line);
  const inScope = (e: OptionEntry): boolean => (scope === 'window' ? e.scope === 'window' || e.scope === 'pane' : e.scope === scope);
  for (const entry of OPTION_TABLE.filter(inScope)) {
    let value = store.getOwn(entry.name);
    let inherited = false;
    if (value === undefined) {
      if (!hasFlag(command, 'A')) continue;
      value = store.get(entry.name);
      if (value === undefined) continue;
      inherited = true;
    }
    for (const line of formatOption(entry.name, value, valuesOnly, inherited)) ctx.print(line);
  }
}

const setOptionCommand: Command = (ctx, runtime, command) => setOption(ctx, runtime, command, false);
const setWindowOption: Command = (ctx, runtime, command) => setOption(ctx, runtime, command, true);
const showOptionsCommand: Command = (ctx, _runtime, command) => showOptions(ctx, command, false);
const showWindowOptions: Command = (ctx, _runtime, command) => showOptions(ctx, command, true);

const setEnvironment: Command = (ctx, _runtime, command) => {
  const name = command.args[0] as string;
  if (name === '') throw new CommandError('empty variable name');
  if (name.includes('=')) throw new CommandError('variable name contains =');
  let value = command.args[1];
  if (value !== undefined && hasFlag(command, 'F')) value = ctx.expand(value, ctx.targetOrNothing(command, 'session'));
  let env = ctx.server.environment;
  if (!hasFlag(command, 'g')) {
    const session = ctx.targetOrNothing(command, 'session').session;
    const given = flagValue(command, 't');
    if (!session) throw new CommandError(given !== undefined ? `no such session: ${given}` : 'no current session');
    env = session.environment;
  }
  if (hasFlag(command, 'u')) {
    if (value !== undefined) throw new CommandError("can't specify a value with -u");
    env.delete(name);
  } else if (hasFlag(command, 'r')) {
    if (value !== undefined) throw new CommandError("can't specify a value with -r");
    env.set(name, null);
  } else {
    if (value === undefined) throw new CommandError('no value specified');
    env.set(name, value);
  }
};

const showEnvironment: Command = (ctx, _runtime, command) => {
  let env = ctx.server.environment;
  if (!hasFlag(command, 'g')) {
    const session = ctx.target(command, 'session').session;
    if (!session) throw new CommandError('no current session');
    env = session.environment;
  }
  const shell = hasFlag(command, 's');
  const print = (name: string, value: string | null): void => {
    if (shell) ctx.print(value === null ? `unset ${name};` : `${name}="${value.replace(/(["$`\\])/g, '\\$1')}"; export ${name};`);
    else ctx.print(value === null ? `-${name}` : `${name}=${value}`);
  };
  const name = command.args[0];
  if (name !== undefined) {
    if (!env.has(name)) throw new CommandError(`unknown variable: ${name}`);
    print(name, env.get(name) ?? null);
    return;
  }
  for (const key of [...env.keys()].sort()) print(key, env.get(key) ?? null);
};

/** The hook list a set-hook / show-hooks acts on. */
function hookList(ctx: CommandContext, command: ParsedCommand, hook: string | undefined): Map<string, string[]> {
  const target = ctx.targetOrNothing(command, 'pane');
  const windowHook = hook !== undefined ? WINDOW_HOOKS.includes(hook) : hasFlag(command, 'w') || hasFlag(command, 'p');
  if (hasFlag(command, 'p')) {
    if (!target.pane) throw new CommandError('no current pane');
    return target.pane.hooks;
  }
  if (windowHook || hasFlag(command, 'w')) {
    if (hasFlag(command, 'g')) return ctx.server.windowHooks;
    if (!target.window) throw new CommandError('no current window');
    return target.window.hooks;
  }
  if (hasFlag(command, 'g')) return ctx.server.sessionHooks;
  if (!target.session) throw new CommandError('no current session');
  return target.session.hooks;
}

/**
 * A command string checked and printed as tmux stores it: parsed once, when it is set, with
 * `$NAME` outside single quotes taken from the server's global environment (as tmux's parser does,
 * never the client's), and printed back with `$` escaped, so running it later expands nothing.
 */
function canonicalCommands(text: string, env: Record<string, string>): string {
  try {
    const words = tokenizeCommandString(text, env);
    return words.map((w) => printCommand(parseArgv(w)[0] as ParsedCommand)).join(' ; ');
  } catch (err) {
    if (err instanceof CommandParseError) throw new CommandError(err.message);
    throw err;
  }
}

const setHook: Command = (ctx, runtime, command) => {
  const hook = command.args[0] as string;
  const known = SESSION_HOOKS.includes(hook) || WINDOW_HOOKS.includes(hook) || /^after-/.test(hook);
  if (!known) throw new CommandError(`invalid option: ${hook}`);
  const hooks = hookList(ctx, command, hook);
  if (hasFlag(command, 'R')) {
    const target = ctx.targetOrNothing(command, 'pane');
    runtime.fireHook(hook, target.pane);
    return;
  }
  if (hasFlag(command, 'u')) {
    if (hooks === ctx.server.sessionHooks || hooks === ctx.server.windowHooks) hooks.set(hook, []);
    else hooks.delete(hook);
    return;
  }
  const text = command.args[1];
  if (text === undefined) throw new CommandError('empty value');
  const stored = canonicalCommands(text, sessionEnvironment(ctx.server, undefined));
  hooks.set(hook, hasFlag(command, 'a') ? [...(hooks.get(hook) ?? []), stored] : [stored]);
};

const showHooks: Command = (ctx, _runtime, command) => {
  const hooks = hookList(ctx, command, undefined);
  const global = hooks === ctx.server.sessionHooks || hooks === ctx.server.windowHooks;
  const names = global ? [...hooks.keys()] : [...hooks.keys()].sort();
  for (const name of names) {
    const list = hooks.get(name) ?? [];
    if (list.length === 0) {
      if (global) ctx.print(name);
      continue;
    }
    list.forEach((cmd, i) => ctx.print(`${name}[${i}] ${cmd}`));
  }
};

const bindKey: Command = (ctx, _runtime, command) => {
  const key = command.args[0] as string;
  if (!isKeyName(key)) throw new CommandError(`unknown key: ${key}`);
  const table = hasFlag(command, 'n') ? 'root' : (flagValue(command, 'T') ?? 'prefix');
  const rest = command.args.slice(1);
  let printed = '';
  if (rest.length > 0) {
    try {
      const parsed = rest.length === 1 ? tokenizeCommandString(rest[0] as string, sessionEnvironment(ctx.server, undefined)).map((w) => parseArgv(w)[0] as ParsedCommand) : parseArgv(rest);
      printed = parsed.map(printCommand).join(' \\; ');
    } catch (err) {
      if (err instanceof CommandParseError) throw new CommandError(err.message);
      throw err;
    }
  }
  const bindings = ctx.server.keyTables.get(table) ?? new Map<string, KeyBinding>();
  ctx.server.keyTables.set(table, bindings);
  const canonical = canonicalKey(key);
  bindings.set(canonical, { key: canonical, repeat: hasFlag(command, 'r'), note: flagValue(command, 'N'), command: printed });
};

const unbindKey: Command = (ctx, _runtime, command) => {
  const table = hasFlag(command, 'n') ? 'root' : (flagValue(command, 'T') ?? 'prefix');
  if (hasFlag(command, 'a')) {
    ctx.server.keyTables.get(table)?.clear();
    return;
  }
  const key = command.args[0];
  if (key === undefined) throw new CommandError('missing key');
  if (!isKeyName(key)) {
    if (hasFlag(command, 'q')) return;
    throw new CommandError(`unknown key: ${key}`);
  }
  ctx.server.keyTables.get(table)?.delete(canonicalKey(key));
};

const listKeys: Command = (ctx, _runtime, command) => {
  const only = flagValue(command, 'T');
  const keyFilter = command.args[0] !== undefined ? canonicalKey(command.args[0]) : undefined;
  const rows: { table: string; binding: KeyBinding }[] = [];
  for (const [table, bindings] of [...ctx.server.keyTables.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (only !== undefined && table !== only) continue;
    for (const binding of [...bindings.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
      if (keyFilter !== undefined && binding.key !== keyFilter) continue;
      rows.push({ table, binding });
    }
  }
  if (only !== undefined && !ctx.server.keyTables.has(only)) throw new CommandError(`table ${only} doesn't exist`);
  if (hasFlag(command, 'N')) {
    for (const { binding } of rows) if (binding.note !== undefined) ctx.print(`${binding.key} ${binding.note}`);
    return;
  }
  const tableWidth = Math.max(0, ...rows.map((r) => r.table.length));
  const keyWidth = Math.max(0, ...rows.map((r) => r.binding.key.length));
  const anyRepeat = rows.some((r) => r.binding.repeat);
  for (const { table, binding } of rows) {
    const repeat = binding.repeat ? '-r ' : anyRepeat ? '   ' : '';
    const line = `bind-key ${repeat}-T ${table.padEnd(tableWidth)} ${escapeArgument(binding.key).padEnd(keyWidth)} ${binding.command}`;
    ctx.print(line.trimEnd());
  }
};

const listCommands: Command = (ctx, _runtime, command) => {
  const name = command.args[0];
  let specs = COMMANDS;
  if (name !== undefined) {
    const found = lookupCommand(name);
    if (!found.ok) throw new CommandError(found.error);
    specs = [found.spec];
  }
  const format = flagValue(command, 'F');
  for (const spec of specs) {
    if (format === undefined) ctx.print(usageLine(spec));
    else ctx.print(ctx.expand(format, { ...ctx.current }, { command_list_name: spec.name, command_list_alias: spec.alias ?? '', command_list_usage: spec.usage }));
  }
};

const accepted: Command = () => undefined;

/** The option, environment, hook and key commands, by name. */
export const OPTION_COMMANDS: Readonly<Record<string, Command>> = {
  'set-option': setOptionCommand,
  'set-window-option': setWindowOption,
  'show-options': showOptionsCommand,
  'show-window-options': showWindowOptions,
  'set-environment': setEnvironment,
  'show-environment': showEnvironment,
  'set-hook': setHook,
  'show-hooks': showHooks,
  'bind-key': bindKey,
  'unbind-key': unbindKey,
  'list-keys': listKeys,
  'list-commands': listCommands,
  'show-messages': accepted,
  'clear-prompt-history': accepted,
  'show-prompt-history': accepted,
  'server-access': accepted,
};
