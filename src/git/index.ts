export { addWorktree, commitAll, ensureWorktree, isRepositoryTop, pushBranch, removeUnchangedWorktree, repositoryOf, worktreeChanges, type Worktree, type WorktreeChanges } from './worktrees.js';
