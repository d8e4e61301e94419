/**
 * Issue 21, item 1, the stronger boundary: as the same OS user, a program that clears its
 * environment and leaves its pane's process tree (`env -i setsid`) is no longer known to the daemon
 * as the pane's, and could read the owner's token from the runtime file or from an owner shell's
 * /proc/PID/environ. With `agentSandbox: 'bwrap'` agent panes run in bubblewrap: the runtime file is
 * covered and the pane has a PID namespace of its own, so neither is there to read, whatever the
 * program does; the home is read-only there, so its policy cannot be rewritten from inside. Runs where bubblewrap works (the test line installs Debian's).
 */
import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { connect } from '../../src/index.js';
import { bubblewrapProblem, findBubblewrap } from '../../src/platform/index.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { BASH_ARGV, BASH_ENV, SHELL_AGENT_ENV } from '../support/shell.js';
import { until } from '../support/processes.js';

const bwrap = findBubblewrap();
const usable = bwrap !== undefined && bubblewrapProblem(bwrap) === undefined;

describe.runIf(usable)('agent panes in bubblewrap', () => {
  const t = useTestDaemon({ agentSandbox: 'bwrap' });

  it('leaves a program of an agent pane no owner token to find: the runtime file is covered, no process outside the pane shows', async () => {
    const owner = await connect({ home: t.home, env: cleanEnv() });
    const ownerShell = await owner.createPane({ argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work });
    const agent = await owner.createPane({ agent: 'shell', cwd: t.work, env: SHELL_AGENT_ENV(t.work) });
    // Removed however the test ends, so that the next test sees only its own pane.
    onTestFinished(async () => {
      for (const p of [ownerShell, agent]) await owner.remove(p.pane_id).catch(() => undefined);
      owner.close();
    });
    expect(t.daemon.agentSandbox).toBe(bwrap);
    const out = path.join(t.work, 'sandboxed.json');
    const script = path.join(t.work, 'look.mjs');
    // What an attacker would try from inside, after leaving the tree with a clean environment.
    writeFileSync(
      script,
      `import { readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
const attempt = (fn) => { try { return { ok: true, value: fn() }; } catch (e) { return { ok: false, error: e.code ?? e.message }; } };
writeFileSync(${JSON.stringify(out)}, JSON.stringify({
  runtimeFile: attempt(() => readFileSync(${JSON.stringify(path.join(t.home, 'daemon.json'))}, 'utf8')),
  sealingKey: attempt(() => readFileSync(${JSON.stringify(`${t.home}.key`)}, 'utf8')),
  ownerEnviron: attempt(() => readFileSync('/proc/${ownerShell.pid}/environ', 'utf8')),
  daemonEnviron: attempt(() => readFileSync('/proc/${process.pid}/environ', 'utf8')),
  policyWrite: attempt(() => writeFileSync(${JSON.stringify(path.join(t.home, 'policy.yaml'))}, 'sandbox: { roots: [/] }')),
  pidNamespace: readlinkSync('/proc/self/ns/pid'),
  commands: readdirSync('/proc').filter((e) => /^\\d+$/.test(e)).map((pid) => attempt(() => readFileSync('/proc/' + pid + '/cmdline', 'utf8').split('\\0').join(' ')).value ?? ''),
}));
`,
    );
    await owner.sendText(agent.pane_id, `env -i setsid -f ${process.execPath} ${script}`, { addNewline: true });
    await until(() => {
      try {
        return readFileSync(out, 'utf8').length > 0;
      } catch {
        return false;
      }
    }, 'the sandboxed program wrote what it saw');
    type Attempt = { ok: boolean; value?: string };
    const seen = JSON.parse(readFileSync(out, 'utf8')) as { runtimeFile: Attempt; sealingKey: Attempt; ownerEnviron: Attempt; daemonEnviron: Attempt; policyWrite: Attempt; pidNamespace: string; commands: string[] };
    expect(seen.runtimeFile.ok && (seen.runtimeFile.value ?? '').includes(t.daemon.token)).toBe(false);
    // The key that opens the home's sealed files was made before the pane started, so it is covered too.
    const key = readFileSync(`${t.home}.key`, 'utf8');
    expect(key).toMatch(/^[0-9a-f]{64}\n$/);
    expect(seen.sealingKey.ok && seen.sealingKey.value === key).toBe(false);
    expect(seen.ownerEnviron.ok).toBe(false);
    expect(seen.daemonEnviron.ok).toBe(false);
    // The home is read-only inside: the daemon's policy cannot be rewritten from an agent pane.
    expect(seen.policyWrite).toMatchObject({ ok: false, error: 'EROFS' });
    expect(existsSync(path.join(t.home, 'policy.yaml'))).toBe(false);
    // A PID namespace of its own: bubblewrap's init, the shell and what it started, nothing of the
    // machine outside (not this test's process, which is also the daemon's).
    expect(seen.pidNamespace).not.toBe(readlinkSync('/proc/self/ns/pid'));
    expect(readFileSync('/proc/self/cmdline', 'utf8')).toContain('vitest');
    expect(seen.commands.filter((c) => c.includes('vitest')), seen.commands.join('\n')).toEqual([]);
    // The pane's own token still works from inside: asking and reading is what it is for.
    const listed = await owner.list();
    expect(listed.panes.map((p) => p.pane_id)).toContain(agent.pane_id);
  });

  it("still lets the pane's programs call the daemon with the pane's own token", async () => {
    const owner = await connect({ home: t.home, env: cleanEnv() });
    const agent = await owner.createPane({ agent: 'shell', cwd: t.work, env: SHELL_AGENT_ENV(t.work) });
    onTestFinished(async () => {
      await owner.remove(agent.pane_id).catch(() => undefined);
      owner.close();
    });
    const out = path.join(t.work, 'pane-call.txt');
    const library = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'dist', 'index.js');
    const script = path.join(t.work, 'call.mjs');
    writeFileSync(script, `import { connect } from ${JSON.stringify(library)};\nimport { writeFileSync } from 'node:fs';\nconst c = await connect();\nconst r = await c.list();\nwriteFileSync(${JSON.stringify(out)}, String(r.panes.length));\nc.close();\n`);
    await owner.sendText(agent.pane_id, `${process.execPath} ${script}`, { addNewline: true });
    await until(() => existsSync(out) && readFileSync(out, 'utf8') !== '', 'the pane listed the panes with its own token');
    // Its own pane only: a scoped token lists what its grant covers.
    expect(readFileSync(out, 'utf8')).toBe('1');
  });
});
