// The layer rule of src/ (docs/architecture.md draws it): each room may import only the rooms it
// lists, matched on the resolved path of every import (static, dynamic `import()`, type-only,
// re-exports), so no spelling of a path gets around it. `scripts/check-layers.mjs` runs it in the
// lint step, and fails too when a room is allowed an edge it does not use (the list is the map,
// not a ceiling). Tests beside the code may reach across, and nothing may import src/index.ts,
// the library's surface.

/**
 * Rooms, bottom to top, and what each may import. A room is a folder of src/; agents/ and drivers/
 * have rooms inside (a subfolder is its own room, the folder's own files are one more). Outside
 * agents/, `agents` is its barrel (src/agents/index.ts) only.
 */
export const ROOMS = {
  core: [],
  platform: [],
  contract: [],
  protocol: ['core', 'contract'],
  'model-server': ['core'],
  // NATS JetStream between controller and nodes (issue 26): the secret files' trust rule is platform's.
  cluster: ['core', 'platform'],
  pane: ['core', 'platform'],
  output: ['core', 'contract'],
  approvals: ['core', 'platform', 'contract'],
  'agents/profiles': ['core', 'platform', 'contract', 'pane'],
  'agents/environment': ['core', 'platform', 'pane', 'agents/profiles'],
  'agents/screen': ['core', 'contract', 'pane', 'agents/profiles'],
  'agents/live': ['core', 'platform', 'pane', 'approvals', 'agents/profiles', 'agents/environment', 'agents/screen'],
  agents: ['agents/profiles', 'agents/environment', 'agents/screen', 'agents/live'],
  drivers: ['core', 'platform', 'contract', 'output', 'approvals', 'agents'],
  'drivers/pane': ['core', 'pane', 'approvals', 'agents'],
  // Worktrees with the user's own git: a team's workers' and a node's repository runs'.
  git: ['core', 'platform'],
  ledger: ['core', 'platform', 'contract', 'output'],
  governance: ['core', 'platform', 'approvals', 'ledger'],
  logs: ['core', 'platform', 'pane', 'output', 'agents'],
  runs: ['core', 'platform', 'pane', 'output', 'approvals', 'agents', 'drivers', 'drivers/pane', 'ledger', 'governance', 'logs'],
  doctor: ['core', 'pane', 'model-server', 'agents', 'drivers/pane'],
  asks: ['core', 'platform', 'contract', 'pane', 'agents', 'ledger'],
  orchestration: ['core', 'platform', 'approvals', 'agents', 'ledger', 'git'],
  // Runs across machines (issue 26): the run service on a node, and the controller's side, over the cluster room.
  'cluster-runs': ['core', 'ledger', 'runs', 'cluster', 'git'],
  tmux: ['core', 'platform', 'protocol', 'pane', 'agents'],
  api: ['core', 'platform', 'contract', 'protocol', 'pane', 'approvals', 'agents', 'drivers/pane', 'ledger', 'logs', 'runs', 'asks', 'orchestration', 'tmux'],
  // Transports take the service object and an authenticate step: never the pane, agent or log rooms.
  surfaces: ['core', 'platform', 'contract', 'protocol', 'api'],
  // Panes on other hosts (issue 26): the pane operations over NATS, both ends (a transport of api's, as surfaces/ are).
  'cluster-panes': ['core', 'protocol', 'api', 'cluster'],
  client: ['core', 'platform', 'protocol'],
  daemon: ['core', 'platform', 'protocol', 'pane', 'agents', 'ledger', 'governance', 'logs', 'runs', 'asks', 'orchestration', 'api', 'surfaces', 'cluster', 'cluster-runs', 'cluster-panes'],
  cli: ['core', 'platform', 'protocol', 'pane', 'approvals', 'agents', 'drivers/pane', 'model-server', 'doctor', 'tmux', 'client', 'daemon', 'surfaces'],
};

/**
 * Packages the daemon and the CLI load only when the feature that needs them is used, through
 * `import()`: a daemon on one machine never needs NATS or PostgreSQL, and a daemon no MCP or ACP
 * client talks to never needs their SDKs; loaded at start they held megabytes for nothing (issue
 * 25's memory budget). scripts/check-layers.mjs fails a static import chain from an entry to one.
 */
export const LAZY_PACKAGES = [
  {
    entries: ['src/cli/main.ts', 'src/cli/daemon-commands.ts'],
    packages: ['pg', '@nats-io', '@modelcontextprotocol/sdk', '@agentclientprotocol/sdk'],
    why: 'loaded only when used (import()), not by every daemon and command',
  },
];

/** Folders with rooms inside: the subfolders named in ROOMS, and the folder's own files. */
const SPLIT = ['agents', 'drivers'];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** The paths of a room, as a regular expression on a resolved path. */
export function roomPath(room) {
  if (SPLIT.includes(room)) {
    const inner = Object.keys(ROOMS).filter((r) => r.startsWith(`${room}/`)).map((r) => escape(r.slice(room.length + 1)));
    // The folder's own files, not its rooms' (for agents/, its barrel only).
    return `^src/${escape(room)}/(?!(?:${inner.join('|')})/)`;
  }
  return `^src/${escape(room)}/`;
}

/** The room of a path of src/, or undefined (src/index.ts, files outside src/). */
export function roomOf(file) {
  const rooms = Object.keys(ROOMS).sort((a, b) => b.length - a.length);
  return rooms.find((r) => new RegExp(roomPath(r)).test(file));
}

const layerRules = Object.entries(ROOMS).map(([room, allowed]) => ({
  name: `layers:${room}`,
  comment: `src/${room}/ may import only ${allowed.length > 0 ? allowed.join(', ') : 'nothing of src/'} (docs/architecture.md).`,
  severity: 'error',
  from: { path: roomPath(room), pathNot: '\\.test\\.ts$' },
  to: { path: '^src/', pathNot: [roomPath(room), ...allowed.map(roomPath)] },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    ...layerRules,
    {
      name: 'no-cycles',
      comment: 'A module that reaches itself through its imports (type-only ones too): the layers are a tree of rooms, and so are the modules.',
      severity: 'error',
      from: { path: '^src/', pathNot: '\\.test\\.ts$' },
      to: { circular: true },
    },
    {
      name: 'no-surface-inside',
      comment: 'src/index.ts is the library surface over every room: nothing inside imports it.',
      severity: 'error',
      from: { path: '^src/.+/' },
      to: { path: '^src/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['\\.test\\.ts$', '^src/.*\\.d\\.ts$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.tsx', '.js', '.mjs'] },
    moduleSystems: ['es6', 'cjs'],
    detectJSDocImports: false,
  },
};
