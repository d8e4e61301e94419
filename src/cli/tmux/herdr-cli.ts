/** Runs the herdr front end over the tmux launcher's calls to the daemon. */
import { HERDR_SOCKET_LABEL, HerdrFrontEnd } from './herdr.js';
import { daemonAnswers, launcherHome, tmuxCall } from './launcher.js';

export interface HerdrIo {
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  home?: string;
}

/** Runs one herdr command line; resolves with its exit code. */
export async function runHerdrLauncher(argv: string[], io: HerdrIo): Promise<number> {
  const env = { ...io.env, PWD: io.env.PWD ?? io.cwd };
  const callIo = { env, cwd: io.cwd, home: io.home, stdin: (): NodeJS.ReadableStream => process.stdin, stdinIsTTY: false };
  const runner = async (args: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> => {
    const result = await tmuxCall(['-L', HERDR_SOCKET_LABEL, ...args], callIo);
    return { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode };
  };
  const home = io.home ?? launcherHome(env);
  const front = new HerdrFrontEnd(runner, env, home, () => daemonAnswers(callIo));
  const result = await front.run(argv);
  io.stdout.write(result.stdout);
  io.stderr.write(result.stderr);
  return result.exitCode;
}
