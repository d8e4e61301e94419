/**
 * How a profile's transcript folder names the working folder: `{cwd_dashed}` is Claude Code's
 * folder name for it under ~/.claude/projects, where every character that is not a letter or
 * digit becomes '-'. The ask engine reads transcripts there; a cluster node carries them to
 * another host from there.
 */
export function dashedCwd(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, '-');
}
