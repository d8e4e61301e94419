/**
 * Everything that differs between operating systems lives behind this module: shells, process
 * trees, socket paths and file permissions. No other module checks process.platform.
 */
export { absolutePathEntries, defaultShell, execCommand, fallbackShell, isExecutable, loginShellArgv, resolveExecutable, scriptShell, shellArgv, shellCommandLine, type CommandLine } from './shell.js';
export {
  collectProcessTree,
  findProcessesByEnv,
  findProcessesWithEnv,
  killMarkedNow,
  processIdentity,
  isProcessRunning,
  killProcessGroupNow,
  listProcesses,
  signalProcessTree,
  terminateProcessTree,
  type EnvMarker,
  
  
} from './processes.js';
export { agentTempRoot, isFilesystemSocket, localSocketPath, privateSocketDir, switchboardHome } from './paths.js';
export { closeInheritedDescriptors, closeOnExecProblem, setCloseOnExec } from './descriptors.js';
export { connectionPeer, processEnvValue, processLineage } from './peer-process.js';
export { bubblewrapProblem, findBubblewrap, jailedCommand } from './process-jail.js';
export { createPrivateFileExclusive, ensurePrivateDir, readPrivateFile, restrictSocket, writePrivateFileAtomic } from './files.js';
export { foregroundProcess } from './foreground.js';
export { runWithoutTerminal } from './no-terminal.js';
export { holdSocketFile, socketInUse } from './sockets.js';
export { pathWithAppended, writeNodeLaunchers, type LauncherOptions } from './launchers.js';
export { composeEnv, envNameMatches, isolatedHomeEnv, setEnvVar, tempFolderEnv, terminalEmulatorOptions } from './env.js';

/** True on Windows, for the few callers that must choose a different default. */
export const isWindows = process.platform === 'win32';
