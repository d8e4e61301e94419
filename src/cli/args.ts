import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A mistake in how the command was called; printed with a usage hint, exit code 64. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses `argv` for one command; everything after `--` is kept apart, untouched. */
/** An option's value as parsed: a string, a flag, or a list for repeated options. */
export type OptionValue = string | boolean | (string | boolean)[] | undefined;

export function parseCommandArgs(argv: string[], options: Options): { values: Record<string, OptionValue>; positionals: string[]; rest: string[] } {
  const dashDash = argv.indexOf('--');
  const head = dashDash === -1 ? argv : argv.slice(0, dashDash);
  const rest = dashDash === -1 ? [] : argv.slice(dashDash + 1);
  try {
    const parsed = parseArgs({ args: head, options, allowPositionals: true, strict: true });
    return { values: parsed.values, positionals: parsed.positionals, rest };
  } catch (err) {
    const message = (err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, '');
    // Node's own wording goes on about positionals; the option is what the person needs to see.
    const unknown = /^Unknown option '([^']+)'/.exec(message);
    throw new UsageError(unknown ? `unknown option '${unknown[1] ?? ''}'` : message);
  }
}

/** A required positive integer option, or the default. */
export function intOption(value: unknown, name: string, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || !Number.isInteger(n) || n < 0) {
    throw new UsageError(`--${name} needs a whole number, got '${typeof value === 'string' ? value : typeof value}'`);
  }
  return n;
}

/** Parses repeated `--env KEY=VALUE` options. */
export function envOptions(values: unknown): Record<string, string> | undefined {
  if (values === undefined) return undefined;
  const list = Array.isArray(values) ? values : [values];
  const env: Record<string, string> = {};
  for (const item of list) {
    const text = String(item);
    const eq = text.indexOf('=');
    if (eq <= 0) throw new UsageError(`--env needs KEY=VALUE, got '${text}'`);
    env[text.slice(0, eq)] = text.slice(eq + 1);
  }
  return env;
}
