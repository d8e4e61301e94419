/**
 * git run as Switchboard runs it (src/git/run-git.ts), from a process that has a terminal: the
 * test starts this in a pseudo-terminal to see that the ssh git starts cannot open it.
 * Usage: node --import tsx test/support/git-on-a-terminal.ts <folder> <ssh program>
 * Prints `git: ok`, or `git: <error code>`, once git has ended.
 */
import { isSwitchboardError } from '../../src/core/errors.js';
import { git } from '../../src/git/run-git.js';

const [folder, ssh] = process.argv.slice(2);
if (folder === undefined || ssh === undefined) throw new Error('usage: git-on-a-terminal.ts <folder> <ssh program>');
try {
  await git(folder, ['ls-remote', 'ssh://git.example.invalid/repo.git'], { env: { ...process.env, GIT_SSH_COMMAND: ssh, GIT_SSH_VARIANT: 'ssh' } });
  console.log('git: ok');
} catch (err) {
  console.log(`git: ${isSwitchboardError(err) ? err.code : String(err)}`);
}
