/**
 * A risk of issue 11: a home too deep for a socket path put the socket in a folder under /tmp with
 * a predictable name, which another user could create first (and so keep the daemon from starting,
 * or own the folder it listens in). The folder's name is unguessable now, made 0700 at once.
 */
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon/index.js';
import { RawClient, resultOf } from '../support/daemon.js';
import { tempDir } from '../support/shell.js';

describe.runIf(process.platform !== 'win32')('the socket of a deep home', () => {
  it('lives in a private folder with an unguessable name, even when the old predictable one is squatted', async () => {
    const scratch = tempDir('sb-deep-');
    const home = path.join(scratch.dir, 'a-folder-name-long-enough-to-push-the-socket-path-past-what-unix-sockets-allow', 'home');
    const predictable = path.join(tmpdir(), `switchboard-${process.getuid?.() ?? 0}-${createHash('sha256').update(home).digest('hex').slice(0, 12)}`);
    // Another user got there first (as root, the test can stand in for one).
    mkdirSync(predictable, { mode: 0o777 });
    if (process.getuid?.() === 0) chownSync(predictable, 65534, 65534);
    let daemon: Daemon | undefined;
    try {
      daemon = await Daemon.start({ home, port: false });
      const socket = daemon.socketPath ?? '';
      const dir = path.dirname(socket);
      expect(dir).not.toBe(predictable);
      expect(path.dirname(dir)).toBe(tmpdir());
      expect(path.basename(dir)).toMatch(new RegExp(`^switchboard-${process.getuid?.() ?? 0}-\\w{6}$`));
      const stat = statSync(dir);
      expect(stat.mode & 0o777).toBe(0o700);
      expect(stat.uid).toBe(process.getuid?.());
      const client = await RawClient.connect(daemon, 'socket');
      expect(resultOf(await client.call(daemon.token, 'ping'))).toMatchObject({ pong: true });
      client.close();
      await daemon.close();
      expect(existsSync(dir)).toBe(false);
    } finally {
      await daemon?.close();
      rmSync(predictable, { recursive: true, force: true });
      scratch.cleanup();
    }
  });
});
