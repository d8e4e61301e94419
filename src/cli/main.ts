#!/usr/bin/env node
import { switchboardVersion } from '../core/version.js';
import { UsageError } from './args.js';
import { reportFailure, wantsHelp, wantsJson } from './failure.js';
import { createContext } from './context.js';
import { COMMANDS } from './commands.js';

function help(): string {
  const lines = Object.values(COMMANDS).flatMap((c) => (Array.isArray(c.usage) ? c.usage : [c.usage]).map((u) => `  switchboard ${u}`));
  return [
    'switchboard: a local control plane for AI coding agents',
    '',
    'usage:',
    ...lines,
    '',
    'PANE is a pane id, a title, or a unique id prefix. Global option: --home DIR (default $SWITCHBOARD_HOME or ~/.switchboard).',
  ].join('\n');
}

/** Runs the CLI; resolves with the process exit code. */
export async function main(argv: string[]): Promise<number> {
  let home: string | undefined;
  const args = [...argv];
  while (args[0]?.startsWith('--')) {
    const flag = args.shift() as string;
    if (flag === '--help' || flag === '-h') {
      process.stdout.write(`${help()}\n`);
      return 0;
    }
    if (flag === '--version') {
      process.stdout.write(`${switchboardVersion()}\n`);
      return 0;
    }
    if (flag === '--home') home = args.shift();
    else if (flag.startsWith('--home=')) home = flag.slice('--home='.length);
    else return reportFailure(process, new UsageError(`unknown option ${flag}`), { name: undefined, json: wantsJson(argv) });
  }
  const name = args.shift();
  if (name === 'help') {
    process.stdout.write(`${help()}\n`);
    return 0;
  }
  if (name === undefined) return reportFailure(process, new UsageError('missing command'), { name: undefined, json: false });
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) return reportFailure(process, new UsageError(`unknown command '${name}'`), { name: undefined, json: wantsJson(args) });
  if (wantsHelp(args)) {
    const usage = (Array.isArray(command.usage) ? command.usage : [command.usage]).map((u) => `usage: switchboard ${u}`);
    process.stdout.write(`${[...usage, ...(command.help ? ['', ...command.help] : [])].join('\n')}\n`);
    return 0;
  }
  const ctx = createContext({ home });
  try {
    return await command.run(ctx, args);
  } catch (err) {
    return reportFailure(process, err, { name, json: wantsJson(args) });
  }
}

process.exitCode = await main(process.argv.slice(2));
