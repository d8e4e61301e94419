/**
 * How every command fails, so a script can rely on it: one line on stderr, the documented exit
 * code (1 error, 64 usage), nothing on stdout, and with --json a JSON result on stdout as well,
 * `{"status":"error","error":{"code":…,"message":…}}` with the stable codes of core/errors.ts.
 */
import { SwitchboardError, errorMessage, isSwitchboardError, type ErrorCode } from '../core/errors.js';
import { UsageError } from './args.js';

export const EXIT_ERROR = 1;
const EXIT_USAGE = 64;

/** Longest error line printed; the JSON result keeps the whole message. */
const MAX_ERROR_LINE = 400;

/** The words before `--` (after it, everything belongs to the program a command starts). */
function ownWords(argv: readonly string[]): readonly string[] {
  const end = argv.indexOf('--');
  return end === -1 ? argv : argv.slice(0, end);
}

/** True when the command was asked for JSON. */
export function wantsJson(argv: readonly string[]): boolean {
  return ownWords(argv).includes('--json');
}

/** True when the command was asked for its usage. */
export function wantsHelp(argv: readonly string[]): boolean {
  const words = ownWords(argv);
  return words.includes('--help') || words.includes('-h');
}

/**
 * A message as one line: errors that carry the agent's screen (a start that failed) keep its
 * lines, joined, so nothing is lost and a script still reads one line.
 */
export function oneLine(message: string): string {
  const lines = message
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const text = lines.join(' | ');
  return text.length > MAX_ERROR_LINE ? `${text.slice(0, MAX_ERROR_LINE - 1)}…` : text;
}

/** The JSON result of a failure. */
export function errorResult(code: ErrorCode, message: string, details?: Readonly<Record<string, unknown>>): { status: 'error'; error: { code: ErrorCode; message: string; details?: Readonly<Record<string, unknown>> } } {
  return { status: 'error', error: { code, message, ...(details ? { details } : {}) } };
}

export interface FailureStreams {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/**
 * Reports `err` for the command `name` (undefined before a command was chosen) and returns the
 * exit code: 64 for a usage mistake, 1 for everything else.
 */
export function reportFailure(streams: FailureStreams, err: unknown, options: { name: string | undefined; json: boolean }): number {
  const usage = err instanceof UsageError;
  const code: ErrorCode = usage ? 'INVALID_PARAMS' : isSwitchboardError(err) ? err.code : 'INTERNAL_ERROR';
  const message = errorMessage(err);
  const details = err instanceof SwitchboardError ? err.details : undefined;
  const where = options.name === undefined ? 'switchboard' : `switchboard ${options.name}`;
  const hint = usage ? ` (see ${where} --help)` : '';
  streams.stderr.write(`${usage ? where : 'switchboard'}: ${oneLine(message)}${hint}\n`);
  if (options.json) streams.stdout.write(`${JSON.stringify(errorResult(code, message, details))}\n`);
  return usage ? EXIT_USAGE : EXIT_ERROR;
}
