// The layer check of the lint step: dependency-cruiser over src/ with the rooms of
// .dependency-cruiser.mjs, on resolved paths (static, dynamic, type-only and re-exported imports).
// It fails on an import a room may not make, on any cycle of modules, and on an edge the
// allow-list grants that no import uses: the list is kept equal to the code's map, so a new edge
// is a decision written down, never room left over. `--json` prints the measurements instead.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import config, { LAZY_PACKAGES, ROOMS, roomOf } from '../.dependency-cruiser.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Cruises `folder` of `baseDir` (a project with a tsconfig.json) with the project's rules. Resolves
 * with the violations, the room edges used (each with the files behind it), the allowed edges no
 * import uses, and the counts a reader wants.
 */
export async function checkLayers(baseDir = root, folder = 'src') {
  const tsConfigFile = path.join(baseDir, 'tsconfig.json');
  const previous = process.cwd();
  // dependency-cruiser resolves and reports paths relative to the working folder.
  process.chdir(baseDir);
  let result;
  try {
    const { output } = await cruise(
      [folder],
      { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden }, tsConfig: { fileName: tsConfigFile } },
      config.options.enhancedResolveOptions,
      { tsConfig: extractTSConfig(tsConfigFile) },
    );
    result = output;
  } finally {
    process.chdir(previous);
  }
  const violations = result.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to, cycle: v.cycle?.map((c) => c.name ?? c) }));
  violations.push(...eagerPackageViolations(result.modules, LAZY_PACKAGES));
  const used = new Map();
  let dynamic = 0;
  let typeOnly = 0;
  for (const module of result.modules) {
    const from = roomOf(module.source);
    if (from === undefined) continue;
    for (const dep of module.dependencies) {
      const to = roomOf(dep.resolved);
      if (to === undefined || to === from) continue;
      if (dep.dynamic) dynamic++;
      if (dep.dependencyTypes.includes('type-only')) typeOnly++;
      const key = `${from} -> ${to}`;
      if (!used.has(key)) used.set(key, new Set());
      used.get(key).add(module.source);
    }
  }
  const allowed = Object.entries(ROOMS).flatMap(([from, tos]) => tos.map((to) => `${from} -> ${to}`));
  const unused = allowed.filter((edge) => !used.has(edge));
  return {
    violations,
    unused,
    edges: [...used.keys()].sort(),
    counts: {
      modules: result.summary.totalCruised,
      imports: result.summary.totalDependenciesCruised,
      rooms: Object.keys(ROOMS).length,
      allowed_edges: allowed.length,
      used_edges: used.size,
      cross_room_dynamic_imports: dynamic,
      cross_room_type_only_imports: typeOnly,
      upward_imports: violations.filter((v) => v.rule.startsWith('layers:')).length,
      cycles: violations.filter((v) => v.rule === 'no-cycles').length,
    },
  };
}

/**
 * The packages a daemon loads only when a feature is used (LAZY_PACKAGES): a module its entries reach
 * through static imports (not `import()`, not type-only ones) may not import one. Each such
 * violation names the module that imports the package and the chain of imports from the entry.
 */
export function eagerPackageViolations(modules, rules) {
  const bySource = new Map(modules.map((m) => [m.source, m]));
  const found = [];
  for (const { entries, packages, why } of rules) {
    const via = new Map(entries.map((e) => [e, undefined]));
    const queue = [...entries];
    while (queue.length > 0) {
      const source = queue.shift();
      for (const dep of bySource.get(source)?.dependencies ?? []) {
        if (dep.dynamic || dep.dependencyTypes.includes('type-only')) continue;
        const pkg = packages.find((p) => dep.resolved.startsWith(`node_modules/${p}/`));
        if (pkg !== undefined) {
          const chain = [source];
          for (let at = via.get(source); at !== undefined; at = via.get(at)) chain.unshift(at);
          found.push({ rule: 'lazy-packages', from: source, to: dep.resolved, cycle: undefined, comment: `${pkg}: ${why} (imported through ${chain.join(' -> ')})` });
        } else if (dep.resolved.startsWith('src/') && !via.has(dep.resolved)) {
          via.set(dep.resolved, source);
          queue.push(dep.resolved);
        }
      }
    }
  }
  return found;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const report = await checkLayers();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    for (const v of report.violations) console.error(`${v.rule}: ${v.from} -> ${v.to}${v.cycle ? ` (cycle: ${v.cycle.join(' -> ')})` : ''}${v.comment ? `: ${v.comment}` : ''}`);
    for (const edge of report.unused) console.error(`unused allowance: ${edge} (no import uses it: take it out of ROOMS in .dependency-cruiser.mjs)`);
    const c = report.counts;
    console.log(`layers: ${c.modules} modules, ${c.imports} imports, ${c.rooms} rooms; ${c.used_edges} room edges used of ${c.allowed_edges} allowed; ${c.upward_imports} imports against the rooms, ${c.cycles} cycles`);
  }
  process.exitCode = report.violations.length > 0 || report.unused.length > 0 ? 1 : 0;
}
