/**
 * Filesystem sockets: whether one has a listener, and a socket file held at a path that is only
 * there to be found (`test -S`), closing every connection at once.
 */
import { chmodSync, linkSync, lstatSync, renameSync, rmSync } from 'node:fs';
import net from 'node:net';

const isWindows = process.platform === 'win32';

/**
 * True when something listens on the socket at `socketPath`: only a refused connection (or no file)
 * says nobody does; a listener too busy to accept (EAGAIN) is still there.
 */
export function socketInUse(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT'));
  });
}

/**
 * Holds a socket file at `socketPath` (mode 0600) that accepts and closes every connection: a
 * program that tests the path for a socket finds one, and a client that connects to it learns at
 * once that nobody speaks its protocol there (tmux's prints "server exited unexpectedly") instead
 * of waiting. A stale socket at the path is replaced; a live one, or anything that is not a socket,
 * is left alone (undefined). Disposed, it leaves the file behind, stale, as a tmux server does.
 * Undefined on Windows, which has no socket files.
 */
export async function holdSocketFile(socketPath: string): Promise<{ dispose(): void } | undefined> {
  if (isWindows) return undefined;
  let existing;
  try {
    existing = lstatSync(socketPath);
  } catch {
    existing = undefined;
  }
  if (existing) {
    if (!existing.isSocket() || (await socketInUse(socketPath))) return undefined;
    rmSync(socketPath, { force: true });
  }
  const server = net.createServer((connection) => connection.destroy());
  server.on('error', () => undefined);
  server.listen(socketPath);
  const listening = await new Promise<boolean>((resolve) => {
    server.once('listening', () => resolve(true));
    server.once('error', () => resolve(false));
  });
  if (!listening) return undefined;
  // Not the process-wide umask (other work runs meanwhile): the file says nothing, it only closes.
  chmodSync(socketPath, 0o600);
  server.unref();
  return {
    dispose: () => {
      // The file stays, with nobody listening, as a server that ended leaves it (a client is then
      // refused, and tmux's says "no server running"). Closing unlinks it, so a second link keeps it.
      const kept = `${socketPath}.${process.pid}.${Date.now().toString(36)}`;
      let linked = true;
      try {
        linkSync(socketPath, kept);
      } catch {
        linked = false;
      }
      server.close();
      if (!linked) return;
      try {
        renameSync(kept, socketPath);
      } catch {
        rmSync(kept, { force: true });
      }
    },
  };
}
