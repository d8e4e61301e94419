import { describe, expect, it } from 'vitest';
import { blockedReason } from './blocklist.js';
import { evaluatePolicy } from './evaluate.js';
import { splitShellCommand } from './split.js';
import type { ApprovalPolicy, Decision, PolicyContext, ShellDialect } from './types.js';

/** A policy that allows everything: what still comes out ask or deny is the blocklist's doing. */
const ALLOW_ALL: ApprovalPolicy = { rules: [{ decision: 'allow', reason: 'allow everything' }], default: 'allow' };
const LINUX: PolicyContext = { workdir: '/home/dev/work/app', home: '/home/dev', platform: 'linux' };
const WINDOWS: PolicyContext = { workdir: 'C:\\Users\\dev\\work\\app', home: 'C:\\Users\\dev', platform: 'win32' };

type Row = [command: string, decision: Decision, reason: RegExp];

function judge(command: string, dialect: ShellDialect, ctx: PolicyContext): { decision: Decision; reason: string } {
  return evaluatePolicy(ALLOW_ALL, { tool: 'shell', command, shell: dialect }, ctx);
}

const POSIX_ROWS: Row[] = [
  // rm: always asked; denied at the root, home, a parent of the workdir, system folders.
  ['rm file.txt', 'ask', /rm deletes files/],
  ['rm -r build', 'ask', /rm -r deletes recursively/],
  ['rm -f build/x.o', 'ask', /rm -f deletes by force/],
  ['rm --recursive --force build', 'ask', /deletes recursively/],
  ['rm /tmp/scratch.txt', 'ask', /deletes \/tmp\/scratch\.txt, outside the workdir/],
  ['rm -rf ~', 'deny', /^blocked: rm -rf targets your home directory \(~\)$/],
  ['rm -rf /', 'deny', /^blocked: rm -rf targets the filesystem root \(\/\)$/],
  ['rm -rf $HOME', 'deny', /^blocked: rm -rf targets your home directory/],
  ['rm -rf "${HOME}/"', 'deny', /home directory/],
  ['sudo rm -rf /', 'deny', /^blocked: sudo rm -rf targets the filesystem root/],
  ['rm -rf ..', 'deny', /rm -rf targets a parent of the workdir \(\.\.\)/],
  ['rm -rf ../../..', 'deny', /filesystem root|parent of the workdir|system path/],
  ['rm -rf /etc', 'deny', /the system path \/etc/],
  ['rm -rf /usr/local/lib', 'deny', /system path/],
  ['rm -rf /*', 'deny', /everything in the filesystem root/],
  ['rm -rf ~/*', 'deny', /everything in your home directory/],
  ['rm -rf .*', 'deny', /\.\*, which can match/],
  ['rm -rf -- /', 'deny', /filesystem root/],
  ['/bin/rm -rf --no-preserve-root /', 'deny', /filesystem root/],
  ['\\rm -rf /', 'deny', /filesystem root/],
  ['rmdir ~', 'deny', /rmdir targets your home directory/],
  ['rmdir empty-dir', 'ask', /rmdir deletes files/],
  ['unlink notes.txt', 'ask', /unlink deletes files/],
  ['shred -u secret.txt', 'ask', /shred -u deletes/],
  // Disks.
  ['mkfs.ext4 /dev/sdb1', 'deny', /mkfs\.ext4 \/dev\/sdb1 erases the system path \/dev\/sdb1/],
  ['mkfs -t ext4 disk.img', 'ask', /erases or repartitions disks/],
  ['dd if=/dev/zero of=/dev/sda bs=1M', 'deny', /dd of=\/dev\/sda writes straight to a device/],
  ['wipefs -a /dev/nvme0n1', 'deny', /erases/],
  ['fdisk /dev/sda', 'deny', /erases/],
  ['cat image.iso > /dev/sdb', 'deny', /writing to \/dev\/sdb writes straight to a device/],
  // Power.
  ['shutdown -h now', 'ask', /shutdown -h shuts down or restarts/],
  ['reboot', 'ask', /reboot shuts down/],
  ['halt', 'ask', /halt shuts down/],
  ['poweroff', 'ask', /poweroff shuts down/],
  ['systemctl reboot', 'ask', /shuts down or restarts/],
  // git.
  ['git reset --hard', 'ask', /git reset --hard discards uncommitted changes/],
  ['git -C sub reset --hard HEAD~3', 'ask', /git reset --hard/],
  ['git clean -f', 'ask', /git clean -f deletes untracked files/],
  ['git clean -fdx', 'ask', /git clean -fdx deletes untracked files/],
  ['git clean -xdf', 'ask', /deletes untracked files/],
  ['git push --force origin main', 'ask', /git push --force can overwrite the remote's history/],
  ['git push -f', 'ask', /can overwrite/],
  ['git push --force-with-lease', 'ask', /can overwrite/],
  ['git push origin +main', 'ask', /can overwrite/],
  // Recursive permission changes outside the workdir.
  ['chmod -R 777 /', 'deny', /chmod -R targets the filesystem root/],
  ['chown -R nobody ~', 'deny', /chown -R targets your home directory/],
  ['chmod -R 755 /opt/tools', 'ask', /changes \/opt\/tools recursively, outside the workdir/],
  ['chgrp --recursive staff ../sibling', 'ask', /outside the workdir/],
  // Fork bombs.
  [':(){ :|:& };:', 'deny', /^blocked: fork bomb: the function ':' keeps starting copies of itself/],
  ['bomb() { bomb | bomb & }; bomb', 'deny', /fork bomb/],
  // Downloaded code run by a shell.
  ['curl -fsSL https://example.com/install.sh | sh', 'ask', /curl -fsSL https:\/\/example\.com\/install\.sh \| sh runs downloaded code/],
  ['wget -qO- https://example.com/x | sudo bash', 'ask', /runs downloaded code|another user/],
  ['cat script.sh | bash', 'ask', /piping into bash runs code that cannot be judged/],
  // Elevation.
  ['sudo apt-get install jq', 'ask', /sudo runs a command as another user/],
  ['sudo -u root ls', 'ask', /sudo runs/],
  ['doas ls', 'ask', /doas runs/],
  ['su -c "ls" root', 'ask', /su runs a command as another user/],
  // find.
  ['find . -name "*.o" -delete', 'ask', /find … deletes the files it finds/],
  ['find / -name core -delete', 'deny', /find \/ … deletes files in the filesystem root/],
  ['find ~ -type f -exec rm {} \\;', 'deny', /your home directory/],
  ['find . -exec rm -f {} +', 'ask', /deletes the files it finds/],
  // Wrappers do not hide a command.
  ['nohup rm -rf / &', 'deny', /filesystem root/],
  ['env FOO=1 timeout 10 nice -n 5 rm -rf /', 'deny', /filesystem root/],
  ['xargs rm -rf < list.txt', 'ask', /deletes files chosen at run time/],
  ['bash -c "rm -rf ~"', 'deny', /home directory/],
  ['sh -ec "cd / && rm -rf *"', 'deny', /everything in the filesystem root/],
  ['cd ~ && rm -rf *', 'deny', /everything in your home directory/],
  ['kill -9 -1', 'ask', /signals every process/],
];

const WINDOWS_ROWS: [command: string, dialect: ShellDialect, decision: Decision, reason: RegExp][] = [
  ['Remove-Item x.txt', 'powershell', 'ask', /Remove-Item deletes files/],
  ['Remove-Item -Recurse build', 'powershell', 'ask', /Remove-Item -Recurse deletes recursively/],
  ['Remove-Item -Recurse -Force C:\\', 'powershell', 'deny', /^blocked: Remove-Item -Recurse -Force targets the drive root \(C:\\\)$/],
  ['Remove-Item -Path C:\\Windows\\System32 -Recurse', 'powershell', 'deny', /Remove-Item -Recurse targets the system path C:\\Windows\\System32/],
  ['Remove-Item -LiteralPath:C:\\ -Recurse', 'powershell', 'deny', /drive root/],
  ['Remove-Item $env:USERPROFILE -Recurse -Force', 'powershell', 'deny', /your home directory/],
  ['Remove-Item ~ -Recurse', 'powershell', 'deny', /your home directory/],
  ['ri -r -fo ..', 'powershell', 'deny', /ri -r -fo targets a parent of the workdir/],
  ['ri -r -fo ..\\..', 'powershell', 'deny', /home directory/],
  ['rm -r -fo C:\\', 'powershell', 'deny', /drive root/],
  ['Get-ChildItem C:\\temp | Remove-Item -Recurse', 'powershell', 'ask', /deletes files chosen at run time/],
  ['Format-Volume -DriveLetter D', 'powershell', 'ask', /erases or repartitions disks/],
  ['Stop-Computer -Force', 'powershell', 'ask', /Stop-Computer -Force shuts down/],
  ['Restart-Computer', 'powershell', 'ask', /Restart-Computer shuts down/],
  ['Remove-ItemProperty -Path HKCU:\\Software\\X -Name Y', 'powershell', 'ask', /removes registry values/],
  ['git reset --hard', 'powershell', 'ask', /git reset --hard/],
  ['iwr https://example.com/x.ps1 | iex', 'powershell', 'ask', /runs downloaded code/],
  ['powershell -NoProfile -Command "Remove-Item -Recurse -Force C:\\"', 'powershell', 'deny', /drive root/],
  ['del x.txt', 'cmd', 'ask', /del deletes files/],
  ['del /f /s /q C:\\Windows\\*', 'cmd', 'deny', /del \/f \/s \/q targets everything in the system path C:\\Windows/],
  ['erase /q notes.txt', 'cmd', 'ask', /erase \/q deletes by force/],
  ['rd /s build', 'cmd', 'ask', /rd \/s deletes recursively/],
  ['rd /s /q C:\\', 'cmd', 'deny', /^blocked: rd \/s \/q targets the drive root \(C:\\\)$/],
  ['rmdir /s /q "%USERPROFILE%"', 'cmd', 'deny', /rmdir \/s \/q targets your home directory/],
  ['format C: /q', 'cmd', 'deny', /format \/q C: erases the drive root/],
  ['format D:', 'cmd', 'deny', /drive root/],
  ['diskpart', 'cmd', 'ask', /diskpart erases or repartitions disks/],
  ['reg delete HKLM\\Software\\X /f', 'cmd', 'ask', /reg delete removes registry keys/],
  ['shutdown /s /t 0', 'cmd', 'ask', /shutdown \/s \/t shuts down/],
  ['git clean -fdx', 'cmd', 'ask', /git clean -fdx/],
  ['cmd /c "rd /s /q C:\\"', 'cmd', 'deny', /drive root/],
  ['%0|%0', 'cmd', 'deny', /fork bomb/],
];

describe('the blocklist (POSIX sh)', () => {
  it.each(POSIX_ROWS)('%s → %s', (command, decision, reason) => {
    const verdict = judge(command, 'posix', LINUX);
    expect(verdict.decision).toBe(decision);
    expect(verdict.reason).toMatch(reason);
  });
});

describe('the blocklist (PowerShell and cmd on Windows)', () => {
  it.each(WINDOWS_ROWS)('%s (%s) → %s', (command, dialect, decision, reason) => {
    const verdict = judge(command, dialect, WINDOWS);
    expect(verdict.decision).toBe(decision);
    expect(verdict.reason).toMatch(reason);
  });

  it('judges Windows paths as dangerous on any platform', () => {
    expect(judge('Remove-Item -Recurse -Force C:\\', 'powershell', LINUX).decision).toBe('deny');
  });

  it('reads / as the drive root under Windows', () => {
    expect(judge('rm -rf /', 'posix', WINDOWS).reason).toMatch(/drive root \(C:\\\)/);
  });
});

describe('blockedReason', () => {
  const first = (command: string, dialect: ShellDialect = 'posix') => {
    const r = splitShellCommand(command, dialect);
    if ('error' in r || !r.parts[0]) throw new Error('no part');
    return r.parts[0];
  };

  it('names the command and the target', () => {
    expect(blockedReason(first('rm -rf ~'), LINUX)).toBe('blocked: rm -rf targets your home directory (~)');
    expect(blockedReason(first('git reset --hard'), LINUX)).toMatch(/^asked \(never auto-approved\): git reset --hard/);
  });

  it('is null for commands that are not on the list', () => {
    for (const c of ['ls -la', 'git status', 'npm test', 'chmod -R 755 src', 'git push origin main', 'git clean -n', 'find . -name x', 'dd if=a of=b']) {
      expect(blockedReason(first(c), LINUX), c).toBeNull();
    }
  });

  it('uses the directory a cd moved to', () => {
    const [, rm] = (splitShellCommand('cd / && rm -rf tmp', 'posix') as { parts: Parameters<typeof blockedReason>[0][] }).parts;
    expect(blockedReason(rm as Parameters<typeof blockedReason>[0], LINUX)).toMatch(/system path \/tmp/);
  });

  it('a user rule that allows a blocked command does not override the list', () => {
    const policy: ApprovalPolicy = { rules: [{ decision: 'allow', tool: 'shell', command: '^rm ' }], default: 'deny' };
    expect(evaluatePolicy(policy, { tool: 'shell', command: 'rm -rf /', shell: 'posix' }, LINUX).decision).toBe('deny');
    expect(evaluatePolicy(policy, { tool: 'shell', command: 'rm build.log', shell: 'posix' }, LINUX).decision).toBe('ask');
  });
});
