/**
 * The seed's ask aliases as programs of their own (package.json bin): `cask QUESTION` is
 * `switchboard ask codex QUESTION`, and so on (ASK_ALIASES). Same options, exit codes and
 * failures as `switchboard ask`; `--home DIR` first, as for `switchboard`.
 */
import { ASK_ALIASES, askCommand } from './ask-commands.js';
import { createContext } from './context.js';
import { reportFailure, wantsJson } from './failure.js';

export async function askAliasMain(alias: string, argv: string[]): Promise<number> {
  const agent = ASK_ALIASES[alias];
  if (agent === undefined) throw new Error(`unknown ask alias ${alias}`);
  const args = [...argv];
  let home: string | undefined;
  if (args[0] === '--home') {
    args.shift();
    home = args.shift();
  } else if (args[0]?.startsWith('--home=')) home = args.shift()?.slice('--home='.length);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`usage: ${alias} QUESTION...|- [--async] [--timeout S] [--json]   ask ${agent} (its pane in this folder, or the only one); exit 0 answered, 2 timed out, 1 failed\n`);
    return 0;
  }
  try {
    return await askCommand(createContext(home !== undefined ? { home } : {}), args, agent);
  } catch (err) {
    return reportFailure(process, err, { name: alias, json: wantsJson(args) });
  }
}
