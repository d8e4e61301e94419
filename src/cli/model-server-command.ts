import path from 'node:path';
import { HELLO_SCENARIO, ModelServer, loadScenario } from '../model-server/index.js';
import { intOption, parseCommandArgs, UsageError } from './args.js';
import { out, type CliContext } from './context.js';

/**
 * `model-server [--scenario FILE] [--port N] [--log FILE] [--cwd DIR]`: runs the scripted model in
 * the foreground (127.0.0.1 only), for demos and for trying agents offline with `new --agent X
 * --agent-home DIR --model-url URL`.
 */
export async function modelServerCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    scenario: { type: 'string', short: 's' },
    port: { type: 'string', short: 'p' },
    log: { type: 'string' },
    cwd: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const scenarioFile = values.scenario as string | undefined;
  const scenario = scenarioFile ? loadScenario(path.resolve(scenarioFile)) : HELLO_SCENARIO;
  const server = await ModelServer.start({
    scenario,
    port: intOption(values.port, 'port', 0),
    logFile: values.log === undefined ? undefined : path.resolve(values.log as string),
    cwd: values.cwd === undefined ? undefined : path.resolve(values.cwd as string),
  });
  out(ctx, `scripted model "${scenario.name}" at ${server.url} (Anthropic, OpenAI Responses and Chat, Gemini); Ctrl-C stops it`);
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  out(ctx, `served ${server.requests.length} requests`);
  return 0;
}
