/** Just enough semver for detector data: "2.1.197", and ranges such as ">=2.1.0 <3" or "*". */

type Triple = [number, number, number];

/** The first x.y.z (or x.y, or x) in `text`, e.g. from `claude --version`. */
export function parseVersion(text: string): string | undefined {
  const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  if (!match) return undefined;
  return `${match[1]}.${match[2]}.${match[3] ?? '0'}`;
}

function triple(version: string): Triple {
  const [a = 0, b = 0, c = 0] = version.split('.').map((n) => Number.parseInt(n, 10) || 0);
  return [a, b, c];
}

function compare(x: Triple, y: Triple): number {
  for (let i = 0; i < 3; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const COMPARATOR = /^(>=|<=|>|<|=)?v?(\d+(?:\.\d+){0,2})$/;

function comparators(range: string): string[] {
  return range
    .trim()
    .split(/\s+/)
    .filter((part) => part !== '*' && part !== '');
}

/** True when every part of `range` is a comparator this module understands. */
export function isValidRange(range: string): boolean {
  return comparators(range).every((part) => COMPARATOR.test(part));
}

/** Compares two versions: negative, zero or positive. */
export function compareVersions(a: string, b: string): number {
  return compare(triple(a), triple(b));
}

/** The lowest version a range admits, by its >=, > or = comparators ("0.0.0" when it has none). */
export function rangeFloor(range: string): string {
  let floor = '0.0.0';
  for (const part of comparators(range)) {
    const match = COMPARATOR.exec(part);
    const op = match?.[1] ?? '=';
    if (match?.[2] && (op === '>=' || op === '>' || op === '=') && compareVersions(match[2], floor) > 0) floor = match[2];
  }
  return floor;
}

/** True when `version` satisfies every comparator of `range` (space-separated: >=, >, <=, <, =). */
export function satisfies(version: string, range: string): boolean {
  const v = triple(version);
  for (const part of comparators(range)) {
    const match = COMPARATOR.exec(part);
    if (!match) return false;
    const c = compare(v, triple(match[2] ?? '0'));
    const op = match[1] ?? '=';
    const ok = op === '>=' ? c >= 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : op === '<' ? c < 0 : c === 0;
    if (!ok) return false;
  }
  return true;
}
