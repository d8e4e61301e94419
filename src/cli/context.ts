import type { SwitchboardClient } from '../client/index.js';

/** What every command gets: where to print, the environment, and how to reach the daemon. */
export interface CliContext {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
  /** --home, when given. */
  home: string | undefined;
  /** Connects to the daemon (the caller closes the client). */
  connect(): Promise<SwitchboardClient>;
}

export function createContext(options: { home?: string; env?: NodeJS.ProcessEnv } = {}): CliContext {
  const env = options.env ?? process.env;
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // Lazy: creating process.stdin can keep the process alive after the command is done.
    get stdin() {
      return process.stdin;
    },
    env,
    home: options.home,
    // Loaded on first use: the daemon (`switchboard daemon`) is this CLI too, and never a client.
    connect: async () => (await import('../client/index.js')).connect({ home: options.home, env, warn: (message) => process.stderr.write(`switchboard: warning: ${message}\n`) }),
  };
}

/** Runs `fn` with a connected client and always closes it. */
export async function withClient<T>(ctx: CliContext, fn: (client: SwitchboardClient) => Promise<T>): Promise<T> {
  const client = await ctx.connect();
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

/** Writes a line to stdout. */
export function out(ctx: CliContext, text: string): void {
  ctx.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}
