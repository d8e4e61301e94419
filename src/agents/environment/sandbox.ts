/**
 * Running an agent from an isolated HOME against a model server (tests, demos, trying a CLI
 * offline). The isolation has to hold both ways: the CLI must not write into the user's own
 * configuration, and it must not carry the user's credentials or cloud settings to the model URL.
 */
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import path from 'node:path';
import { SwitchboardError } from '../../core/errors.js';

/**
 * Variables a sandboxed CLI must not inherit from the daemon: API keys and tokens, base URLs,
 * cloud-provider switches (Bedrock, Vertex), config-directory overrides that point back at the
 * user's real files, and forge tokens. The profile's sandbox settings are applied after these are
 * removed; a profile can name more (`sandbox_unset`).
 */
export const SANDBOX_SCRUBBED_ENV: readonly string[] = [
  'ANTHROPIC_*',
  'CLAUDE_*',
  'OPENAI_*',
  'AZURE_OPENAI_*',
  'CODEX_*',
  'GEMINI_*',
  'GOOGLE_*',
  'VERTEX*',
  'CLOUDSDK_*',
  'OPENCODE*',
  'OPENROUTER_*',
  'AIDER_*',
  'AWS_*',
  'GH_TOKEN',
  'GITHUB_TOKEN',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_STATE_HOME',
  'XDG_CACHE_HOME',
];

/** The real path of `p`, or of its deepest existing ancestor joined with the rest. */
function realish(p: string): string {
  const missing: string[] = [];
  let at = p;
  for (;;) {
    try {
      return path.join(realpathSync(at), ...missing.reverse());
    } catch {
      const parent = path.dirname(at);
      if (parent === at) return p;
      missing.push(path.basename(at));
      at = parent;
    }
  }
}

function usersHomes(): string[] {
  const homes = [homedir()];
  try {
    homes.push(userInfo().homedir);
  } catch {
    // no passwd entry: HOME is all there is
  }
  return [...new Set(homes.filter((h) => h.length > 0).map(realish))];
}

/** True when `dir` is `other` or one of its ancestors. */
function containsOrIs(dir: string, other: string): boolean {
  const relative = path.relative(dir, other);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Checks a requested sandbox HOME and creates it (0700). It must be an absolute path, a directory
 * if it exists, and neither the user's own home directory nor one above it: seeding writes
 * `.claude.json`, `.codex/config.toml` and the like, which would replace the user's own.
 */
export function prepareSandboxHome(requested: string): string {
  if (!path.isAbsolute(requested)) {
    throw new SwitchboardError('INVALID_PARAMS', `agent_home must be an absolute path, not '${requested}'`, { agent_home: requested });
  }
  const home = path.resolve(requested);
  const real = realish(home);
  for (const userHome of usersHomes()) {
    if (containsOrIs(real, userHome)) {
      throw new SwitchboardError('INVALID_PARAMS', `agent_home must not be your own home directory or one that contains it (${home}): the agent's configuration is written there`, {
        agent_home: home,
      });
    }
  }
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new SwitchboardError('INVALID_PARAMS', `cannot create agent_home ${home}: ${(err as Error).message}`, { agent_home: home });
  }
  if (!statSync(home).isDirectory()) throw new SwitchboardError('INVALID_PARAMS', `agent_home is not a directory: ${home}`, { agent_home: home });
  return home;
}

/** The model server's base URL, checked: http or https, no query or fragment, no trailing slash. */
export function normalizeModelUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SwitchboardError('INVALID_PARAMS', `model_url is not a URL: '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SwitchboardError('INVALID_PARAMS', `model_url must be http or https, not ${url.protocol}`);
  if (url.search !== '' || url.hash !== '') throw new SwitchboardError('INVALID_PARAMS', 'model_url must not have a query or a fragment');
  if (url.username !== '' || url.password !== '') throw new SwitchboardError('INVALID_PARAMS', 'model_url must not carry credentials');
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}
