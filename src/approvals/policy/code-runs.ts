import { commandName, parseArgs, unwrap, writeTargets, type Invocation, type Unwrapped } from './commands.js';
import { classifyPath, type CwdChains, type PathEnv } from './paths.js';
import type { ShellWord, SimpleCommand } from './types.js';

/**
 * Code the policy cannot read: a command line that runs a file rather than words the policy sees.
 * A script given to an interpreter (`bash x.sh`, `python3.12 x.py`, `pwsh -File x.ps1`), a program
 * run by its path (`./x`, `bin/tool`), a file sourced into the shell (`source x`, `. x`), an
 * interpreter reading its program from a file (`bash < x.sh`), and anything that runs a file the
 * same line writes (the Makefile before `make`, package.json before `npm test`, a git hook before
 * `git commit`, `x.bat` before cmd's `x`). A file in the workdir may have been written by the
 * agent a moment ago, so a script is judged the same whether or not this line wrote it; the line's
 * own writes only sharpen the reason. The approval policy asks about each; the sandbox refuses it.
 */

/** Shells that run a script file given as their first operand. */
const SHELLS = /^(sh|bash|zsh|dash|ksh|mksh|ash|fish|yash|posh|csh|tcsh)$/;
/** Interpreters that run a script file given as their first operand; versioned names included (python3.12, lua5.4). */
const SCRIPT_RUNNERS = /^(python[\d.]*|pypy[\d.]*|perl[\d.]*|ruby[\d.]*|php[\d.]*|lua[\d.]*|luajit|rscript|tclsh[\d.]*|wish[\d.]*|osascript|julia|elixir|guile|racket|groovy|jshell|cscript|wscript|tsx|ts-node|esno|esr|bun|deno|node|nodejs|powershell|pwsh)$/;
/** Options of the interpreters above that take the next word as their value (so it is not the script). */
const SHELL_VALUE_OPTIONS = new Set(['-o', '-O', '+o', '+O', '--rcfile', '--init-file']);
const VALUE_OPTIONS = new Set(['-W', '-X', '-C', '--conditions', '--env-file', '--title', '--input-type', '-d', '-c']);
/** Options naming a file of code the interpreter loads before anything else. */
const PRELOADS = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '-f', '--file']);
/** Interpreters whose inline-code options another module handles (`-c`, `-e`): with one, no script file runs. */
const INLINE = /^(-[A-Za-z]*[ce]|-p|--eval|--print|--command)$/;
const SHELL_INLINE = /^(-[A-Za-z]*c[A-Za-z]*|--command)$/;
/** Where programs are installed by the system, not written by an agent. */
const SYSTEM_PROGRAMS = /^(\/usr\/|\/bin\/|\/sbin\/|\/opt\/|\/nix\/store\/|\/snap\/bin\/|\/system\/|\/applications\/|[a-z]:\\(windows|program files|program files \(x86\))\\)/i;
/** Files cmd and Windows run as scripts by their name alone. */
const WINDOWS_SCRIPTS = /\.(bat|cmd|ps1|vbs|vbe|js|jse|wsf|wsh|hta|msc)$/i;
const PROGRAM_EXTENSIONS = /\.(bat|cmd|exe|com)$/i;
/** Package managers that run the project's own scripts from package.json. */
const PACKAGE_RUNNERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const BUILD_FILES: Record<string, RegExp> = { make: /(^|[\\/])(gnu)?makefile$/i, just: /(^|[\\/])\.?justfile$/i, rake: /(^|[\\/])rakefile$/i };

interface Written {
  text: string;
  resolved: string[];
}

/** For each simple command of one split line: why it runs code that cannot be judged (empty when it does not). */
export function unreadableCode(parts: readonly SimpleCommand[], env: PathEnv): Map<SimpleCommand, string[]> {
  const out = new Map<SimpleCommand, string[]>();
  const written: Written[] = [];
  for (const part of parts) {
    const u = unwrap(part.words, part.dialect);
    const chains: CwdChains = u.cwdUnknown ? [[null]] : part.cwd;
    const notes = u.command ? runsCode(u.command, part, u, chains, env, written) : [];
    if (notes.length > 0) out.set(part, notes);
    for (const w of [...writeTargets(part, u), ...downloadTargets(u)]) written.push({ text: w.text, resolved: classifyPath(w, chains, env).resolved });
  }
  return out;
}

/** The file a word names, if this line wrote it. */
function writtenFile(word: ShellWord, chains: CwdChains, env: PathEnv, written: Written[]): Written | undefined {
  const resolved = classifyPath(word, chains, env).resolved;
  return written.find((w) => w.text === word.text || w.resolved.some((r) => resolved.includes(r)));
}

function describeFile(word: ShellWord, chains: CwdChains, env: PathEnv, written: Written[]): string {
  return writtenFile(word, chains, env, written) ? `${word.text} (written by this same command line)` : word.text;
}

function runsCode(inv: Invocation, part: SimpleCommand, u: Unwrapped, chains: CwdChains, env: PathEnv, written: Written[]): string[] {
  const notes: string[] = [];
  const head = inv.words[0];
  if (!head || head.dynamic || head.code) return notes;
  const args = inv.words.slice(1);
  const name = inv.name;
  const file = (w: ShellWord): string => describeFile(w, chains, env, written);

  // A program named by its path: its code is a file, not words the policy can read.
  if (/[\\/]/.test(head.text) || (part.dialect === 'cmd' && WINDOWS_SCRIPTS.test(head.text)) || (part.dialect === 'powershell' && /\.ps1$/i.test(head.text))) {
    const resolved = classifyPath(head, chains, env).resolved;
    const system = resolved.length > 0 && resolved.every((r) => SYSTEM_PROGRAMS.test(r)) && !writtenFile(head, chains, env, written);
    if (!system) notes.push(`the program file ${file(head)} runs, and its code cannot be judged`);
  } else if (part.dialect === 'cmd') {
    // cmd runs x.bat or x.exe from the current folder by its bare name.
    const ran = written.find((w) => PROGRAM_EXTENSIONS.test(w.text) && commandName(w.text) === name && !/[\\/]/.test(w.text));
    if (ran) notes.push(`${inv.shown} runs ${ran.text}, which this same command line writes`);
  }

  const sourced = name === 'source' || (name === '.' && part.dialect !== 'cmd');
  if (sourced) {
    const target = parseArgs(args, 'posix').operands[0];
    notes.push(target ? `${inv.shown} runs ${file(target)} in this shell, code that cannot be judged` : `${inv.shown} runs code that cannot be judged`);
  }

  const script = scriptOf(inv, u);
  if (script === 'stdin') {
    const from = part.redirects.find((r) => r.kind === 'read' && r.target);
    if (from?.target) notes.push(`${inv.shown} reads its program from ${file(from.target)}, code that cannot be judged`);
    else if (u.unknownArgs) notes.push(`${inv.shown} runs scripts chosen at run time, which cannot be judged`);
  } else if (script) {
    notes.push(`${inv.shown} runs the script ${file(script)}, whose code cannot be judged`);
  }

  notes.push(...projectFileRuns(inv, written));
  if (name === 'find' && part.dialect === 'posix') notes.push(...findRuns(args, part, chains, env, written));
  return notes;
}

/**
 * The script file an interpreter runs: a word, 'stdin' when it reads its program from input, or
 * null when it runs none (inline code, `--version`, a module of its own).
 */
function scriptOf(inv: Invocation, u: Unwrapped): ShellWord | 'stdin' | null {
  const name = inv.name;
  let args = inv.words.slice(1);
  const shell = SHELLS.test(name);
  if (!shell && !SCRIPT_RUNNERS.test(name) && !/^[gmn]?awk$/.test(name) && name !== 'java' && name !== 'go' && name !== 'mshta') return null;
  if (name === 'go') return args[0]?.text === 'run' ? (args[1] ?? null) : null;
  if (name === 'mshta') return args[0] ?? null;
  if (/awk$/.test(name)) {
    const f = args.findIndex((w) => w.text === '-f' || w.text === '--file');
    return f >= 0 ? (args[f + 1] ?? null) : null;
  }
  if (name === 'java') {
    const jar = args.findIndex((w) => w.text === '-jar');
    if (jar >= 0) return args[jar + 1] ?? null;
    return args.find((w) => /\.java$/i.test(w.text)) ?? null;
  }
  // Subcommands that run a file: `deno run x.ts`, `bun run x.ts`, `tsx watch x.ts`.
  if ((name === 'deno' || name === 'bun') && args[0] && !args[0].text.startsWith('-')) {
    const sub = args[0].text;
    if (name === 'bun' && /\.[cm]?[jt]sx?$/.test(sub)) return args[0];
    if (sub !== 'run') return null;
    args = args.slice(1);
    if (name === 'bun' && !/\.[cm]?[jt]sx?$/.test(args.find((w) => !w.text.startsWith('-'))?.text ?? '')) return null;
  }
  if ((name === 'tsx' || name === 'esno') && args[0]?.text === 'watch') args = args.slice(1);
  if (name === 'powershell' || name === 'pwsh') {
    // -Command and -EncodedCommand are read (or asked) by the wrapper rules; -File names a script.
    const f = args.findIndex((w) => /^[-/\u2013\u2014](f|fi|fil|file)$/i.test(w.text));
    if (f >= 0) return args[f + 1] ?? null;
    return args.find((w) => /\.ps1$/i.test(w.text)) ?? null;
  }
  let k = 0;
  while (k < args.length) {
    const w = args[k] as ShellWord;
    const t = w.text;
    if (t === '--' || t === '-') return t === '-' ? 'stdin' : (args[k + 1] ?? 'stdin');
    if (!/^[-+]/.test(t) || t.length < 2) return w;
    if (shell ? SHELL_INLINE.test(t) : INLINE.test(t) && !(name === 'php' && t === '-c')) return null;
    if ((name === 'python' || /^python|^pypy/.test(name)) && t === '-m') return null;
    if (name === 'php' && t === '-f') return args[k + 1] ?? null;
    const eq = t.indexOf('=');
    const option = eq > 0 ? t.slice(0, eq) : t;
    if (PRELOADS.has(option) && !shell) {
      const value = eq > 0 ? { ...w, text: t.slice(eq + 1) } : args[k + 1];
      // `-r ts-node/register` loads an installed module; `-r ./hook.js` loads a file of the workdir.
      if (value && /^[.~/\\]|\.[cm]?[jt]s$/.test(value.text)) return value;
    }
    if (shell && /^-[A-Za-z]*s[A-Za-z]*$/.test(t)) return 'stdin';
    k += eq < 0 && (shell ? SHELL_VALUE_OPTIONS.has(t) : VALUE_OPTIONS.has(t) || PRELOADS.has(t)) ? 2 : 1;
  }
  // With no script operand, a shell or an interpreter reads its program from input; node, bun and
  // deno start a prompt, and PowerShell reads commands (both judged by the pipe and redirect rules).
  return shell || /^(python|pypy|perl|ruby|php|lua)/.test(name) || u.unknownArgs ? 'stdin' : null;
}

/** Source files and the files that say how a project builds or tests: a test runner or a build runs them. */
const PROJECT_CODE = /\.(m?[jt]sx?|c[jt]s|py|pyw|rb|pl|pm|php|sh|bash|zsh|go|rs|java|kt|kts|scala|groovy|c|cc|cpp|cxx|h|hpp|cs|fs|swift|lua|r|ex|exs|erl|ps1|psm1|bat|cmd)$|(^|\/)(package\.json|makefile|gnumakefile|justfile|rakefile|gemfile|cargo\.toml|build\.rs|go\.mod|pyproject\.toml|setup\.py|setup\.cfg|tox\.ini|noxfile\.py|conftest\.py|pytest\.ini|build\.gradle|pom\.xml|[\w.-]+\.config\.[cm]?[jt]s|\.npmrc)$/i;
/** Programs that build, test or start the project: they run its code, whichever files that is. */
const PROJECT_RUNNERS: Record<string, RegExp | null> = {
  npm: /^(test|t|tst|run|run-script|start|restart|stop|exec|x|pack|publish|rebuild)$/,
  pnpm: /^(test|t|run|start|exec|dlx|rebuild)$/,
  yarn: /^(test|run|start|exec|node|dlx)$|^[^-]/,
  bun: /^(test|run|start|x)$/,
  deno: /^(test|task|bench)$/,
  cargo: /^(test|t|run|r|build|b|bench|check|c|clippy)$/,
  go: /^(test|run|generate|build|vet)$/,
  dotnet: /^(test|run|build)$/,
  make: null, just: null, rake: null, pytest: null, 'py.test': null, tox: null, nox: null, jest: null, vitest: null, mocha: null, ava: null, tap: null,
  gradle: null, mvn: null, ant: null, playwright: null, cypress: null,
};

/**
 * Programs that run a file of the project this line wrote: make and its Makefile, npm and
 * package.json, git and its hooks, python -m and its module, and any test runner or build after a
 * source file is written (`echo … > a.test.js && npm test`).
 */
function projectFileRuns(inv: Invocation, written: Written[]): string[] {
  if (written.length === 0) return [];
  const name = inv.name;
  const args = inv.words.slice(1);
  const wrote = (test: (text: string) => boolean): Written | undefined => written.find((w) => test(w.text.replace(/\\/g, '/')));
  const build = BUILD_FILES[name];
  let hit: Written | undefined;
  let pythonRunner = false;
  if (build) hit = wrote((t) => build.test(t)) ?? (name === 'make' ? wrote((t) => args.some((a, i) => (a.text === '-f' || a.text === '--file') && args[i + 1]?.text === t)) : undefined);
  else if (PACKAGE_RUNNERS.has(name)) hit = wrote((t) => /(^|\/)package\.json$/.test(t));
  else if (name === 'git') hit = wrote((t) => /(^|\/)\.git\/(hooks\/|config$)|(^|\/)\.(gitattributes|gitconfig)$|(^|\/)\.husky\//.test(t));
  else if (/^(python|pypy)/.test(name)) {
    const m = args.findIndex((w) => w.text === '-m');
    const mod = m >= 0 ? args[m + 1]?.text : undefined;
    if (mod) {
      const file = mod.replace(/\./g, '/');
      hit = written.find((w) => {
        const t = w.text.replace(/\\/g, '/').replace(/^\.\//, '');
        return t === `${file}.py` || t === `${file}/__main__.py` || t.endsWith(`/${file}.py`);
      });
      // `python -m pytest` and its kind run the project's code.
      pythonRunner = /^(pytest|unittest|tox|nox)$/.test(mod);
    }
  }
  if (hit) return [`${inv.shown} runs ${hit.text}, which this same command line writes: code that cannot be judged`];
  const runner = PROJECT_RUNNERS[name];
  const sub = args.find((w) => !w.text.startsWith('-'))?.text ?? '';
  const runsProject = pythonRunner || runner === null || (runner !== undefined && runner.test(sub)) || (name === 'node' && args.some((w) => w.text === '--test'));
  const code = runsProject ? wrote((t) => PROJECT_CODE.test(t)) : undefined;
  return code ? [`${inv.shown} runs the project's code, which this same command line changes (${code.text}): code that cannot be judged`] : [];
}

const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir']);

/** `find … -exec bash {} \;` runs each file it finds as a script. */
function findRuns(args: ShellWord[], part: SimpleCommand, chains: CwdChains, env: PathEnv, written: Written[]): string[] {
  const notes: string[] = [];
  for (let k = 0; k < args.length; k++) {
    if (!FIND_ACTIONS.has((args[k] as ShellWord).text)) continue;
    const end = args.findIndex((w, j) => j > k && (w.text === ';' || w.text === '+'));
    const words = args.slice(k + 1, end < 0 ? args.length : end);
    const inner = unwrap(words, 'posix');
    inner.unknownArgs = true;
    if (inner.command) notes.push(...runsCode(inner.command, { ...part, words, redirects: [] }, inner, chains, env, written).map((n) => `find ${(args[k] as ShellWord).text}: ${n}`));
    k = end < 0 ? args.length : end;
  }
  return notes;
}

/** The files a download writes: `curl -o F`, `wget -O F`, `Invoke-WebRequest -OutFile F`. */
function downloadTargets(u: Unwrapped): ShellWord[] {
  const inv = u.command;
  if (!inv) return [];
  const args = inv.words.slice(1);
  const flags = inv.name === 'curl' ? ['-o', '--output'] : inv.name === 'wget' ? ['-O', '--output-document'] : /^(iwr|invoke-webrequest|irm|invoke-restmethod)$/.test(inv.name) ? ['-outfile'] : [];
  const out: ShellWord[] = [];
  for (let k = 0; k < args.length; k++) {
    if (flags.includes((args[k] as ShellWord).text.toLowerCase()) && args[k + 1]) out.push(args[k + 1] as ShellWord);
  }
  return out;
}
