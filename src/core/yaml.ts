/**
 * YAML for the files users write (agents.yaml, policy.yaml, approval policies, team presets). The
 * yaml package is loaded at the first file read: it is 72 CommonJS modules (about 800 KiB of code)
 * that a daemon whose home holds no YAML file never runs.
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

let yaml: typeof Yaml | undefined;

/** Parses one YAML document (the yaml package's `parse`, which throws on a syntax error). */
export function parseYaml(text: string): unknown {
  yaml ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yaml.parse(text);
}
