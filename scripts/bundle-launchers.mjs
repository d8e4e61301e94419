// Part of the build, after tsc: the `tmux` and `herdr` commands `switchboard compat install` puts
// on PATH run once per tmux command a tool sends (CCB sends hundreds a minute), so their start is
// what they cost. Node starts an ES module through its ESM loader, which it must first compile
// and set up (about a third of what such a run spends beyond a bare `node -e 0`); a CommonJS
// script does not need it. So each entry point and the few modules it imports become one CommonJS
// file beside it (dist/cli/tmux/tmux-main.cjs), which the installed launchers run; the ES modules
// stay for everything else (and for running from source under tsx).
import { build } from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'dist', 'cli', 'tmux');
const entries = ['tmux-main', 'herdr-main'];

/**
 * The modules find their neighbours from `import.meta.url` (the CLI script a launcher starts a
 * daemon with, say). Inside the bundle each module's `import.meta.url` is still its own file's URL
 * in dist, found from where the bundle is, so every path it derives stays what it was.
 */
const keepModuleUrls = {
  name: 'keep-module-urls',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const relative = path.relative(dir, args.path).split(path.sep).join('/');
      return { contents: source.replaceAll('import.meta.url', `__switchboardModuleUrl(${JSON.stringify(relative)})`), loader: 'js' };
    });
  },
};

for (const name of entries) {
  const entry = path.join(dir, `${name}.js`);
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run tsc first`);
  await build({
    entryPoints: [entry],
    outfile: path.join(dir, `${name}.cjs`),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Packages stay requires of the installed package, never copies (none is on this path today).
    packages: 'external',
    plugins: [keepModuleUrls],
    banner: {
      js: "'use strict';\nconst __switchboardModuleUrl = (relative) => require('node:url').pathToFileURL(require('node:path').join(__dirname, relative)).href;",
    },
    logLevel: 'warning',
  });
}
