/**
 * `switchboard ledger migrate --to postgres://… [--home DIR] [--json]`: the home's SQLite ledger
 * copied into PostgreSQL (daemon/ledger-migration.ts), with what was copied. The URL may come from
 * $SWITCHBOARD_LEDGER instead of --to, so its password need not be on a command line.
 */
import path from 'node:path';
import { migrateHomeLedger } from '../daemon/index.js';
import { switchboardHome } from '../platform/index.js';
import { parseCommandArgs, UsageError } from './args.js';
import { out, type CliContext } from './context.js';

export async function ledgerCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'migrate') throw new UsageError(sub === undefined ? 'ledger: say what to do (migrate)' : `ledger: unknown subcommand '${sub}'`);
  const { values, positionals } = parseCommandArgs(rest, { to: { type: 'string' }, home: { type: 'string' }, json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const to = (values.to as string | undefined) ?? ctx.env.SWITCHBOARD_LEDGER;
  if (to === undefined) throw new UsageError('ledger migrate: --to postgres://… (or $SWITCHBOARD_LEDGER) names the database to copy into');
  const homeOption = values.home as string | undefined;
  const home = homeOption !== undefined ? path.resolve(homeOption) : (ctx.home ?? switchboardHome(ctx.env));
  const copied = await migrateHomeLedger({ home, to });
  if (values.json) {
    out(ctx, JSON.stringify({ status: 'ok', ...copied }));
    return 0;
  }
  out(ctx, `copied ${copied.from} into ${copied.to}: ${copied.runs} runs, ${copied.events} events (${copied.batches} transactions), ${copied.asks} asks, ${copied.teamRuns} team runs with ${copied.teamEvents} new record entries`);
  return 0;
}
