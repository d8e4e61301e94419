/**
 * Defect 7 of issue 11: the CLI used any daemon.json (mode 0666, another user's, a symbolic link)
 * without a word, so whoever could write it could point the CLI at their own daemon. The CLI and
 * the client library check it now, as the daemon checks its own folder.
 */
import { chmodSync, chownSync, renameSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/index.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv, runCli } from '../support/cli.js';

const t = useTestDaemon();

describe.runIf(process.platform !== 'win32')('the runtime file, as the CLI reads it', () => {
  const file = (): string => path.join(t.home, 'daemon.json');

  async function refused(pattern: RegExp): Promise<void> {
    const status = await runCli(t.home, ['status']);
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(pattern);
    await expect(connect({ home: t.home, env: cleanEnv() })).rejects.toMatchObject({ code: 'CONNECTION_FAILED', message: expect.stringMatching(pattern) as unknown });
  }

  it('is trusted when it is the daemon\u2019s own', async () => {
    const status = await runCli(t.home, ['status']);
    expect(status.code).toBe(0);
  });

  it('is refused when others can write it', async () => {
    chmodSync(file(), 0o666);
    try {
      await refused(/refusing to trust the runtime file: .*daemon\.json can be written by other users \(mode 666\)/);
    } finally {
      chmodSync(file(), 0o600);
    }
  });

  it('is refused when others can write the folder it is in', async () => {
    chmodSync(t.home, 0o777);
    try {
      await refused(/refusing to trust the runtime file: .* can be written by other users \(mode 777\)/);
    } finally {
      chmodSync(t.home, 0o700);
    }
  });

  it('is refused when it is a symbolic link', async () => {
    const real = path.join(t.home, 'elsewhere.json');
    renameSync(file(), real);
    symlinkSync(real, file());
    try {
      await refused(/refusing to trust the runtime file: .*daemon\.json is a symbolic link/);
    } finally {
      renameSync(real, file());
    }
  });

  it.runIf(process.getuid?.() === 0)('is refused when another user owns it', async () => {
    chownSync(file(), 65534, 65534);
    try {
      await refused(/refusing to trust the runtime file: .*daemon\.json belongs to another user \(uid 65534\)/);
    } finally {
      chownSync(file(), 0, 0);
    }
  });
});
