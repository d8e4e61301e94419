import { MAX_COMMAND_LENGTH, ParseError, Sink } from './split-common.js';
import { splitCmd } from './split-cmd.js';
import { splitPosix } from './split-posix.js';
import { splitPowerShell } from './split-powershell.js';
import type { ShellDialect, SplitResult } from './types.js';

/**
 * Splits a shell command into the simple commands it runs, in order, including those inside
 * substitutions and blocks. Never throws: what cannot be split with confidence is an `error`.
 */
export function splitShellCommand(command: string, dialect: ShellDialect): SplitResult {
  if (command.length > MAX_COMMAND_LENGTH) return { error: `the command is longer than ${MAX_COMMAND_LENGTH} characters` };
  const sink = new Sink(dialect);
  try {
    if (dialect === 'posix') splitPosix(command, sink);
    else if (dialect === 'powershell') splitPowerShell(command, sink);
    else splitCmd(command, sink);
  } catch (err) {
    if (err instanceof ParseError) return { error: err.message };
    // A splitter bug must not turn into an approval: report it as something that cannot be judged.
    return { error: `internal error while splitting: ${err instanceof Error ? err.message : String(err)}` };
  }
  return { parts: sink.parts };
}
