/**
 * A program that plays recorded screens in a real PTY: each step clears the screen and draws a
 * recording from a fixtures folder, then waits (for a time, or for a key on stdin), and the program
 * exits after the last step. Tests of the state tracker and of AgentPane drive real panes with it.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** A step shows a screen for `ms`, or until the one character `key` is typed. */
export type PlayerStep = { screen: string; ms: number } | { screen: string; key: string };

/** Writes the player for `steps` (screens named without `.txt`, read from `screensDir`) into `dir`; returns its path. */
export function writeScreenPlayer(dir: string, screensDir: string, steps: PlayerStep[]): string {
  const file = path.join(dir, `player-${Math.random().toString(36).slice(2)}.cjs`);
  writeFileSync(
    file,
    `const fs = require('fs');
const steps = ${JSON.stringify(steps)};
const dir = ${JSON.stringify(screensDir)};
process.stdin.setRawMode(true);
const draw = (name) => process.stdout.write('\\x1b[H\\x1b[2J' + fs.readFileSync(dir + '/' + name + '.txt', 'utf8').replace(/\\n$/, '').split('\\n').join('\\r\\n'));
// Keys are taken one at a time, as a terminal program reads them: keys that arrive together (a
// player slow to read on a loaded machine) are not one unknown key, and those after the one a step
// waits for go to the next step.
const typed = [];
let wanted = null;
const take = () => { while (wanted && typed.length > 0) { const k = typed.shift(); if (k === wanted.key) { const w = wanted; wanted = null; w.resolve(); } } };
process.stdin.on('data', (d) => { typed.push(...d.toString()); take(); });
const key = (want) => new Promise((resolve) => { wanted = { key: want, resolve }; take(); });
(async () => {
  for (const step of steps) {
    draw(step.screen);
    if ('key' in step) await key(step.key); else await new Promise((r) => setTimeout(r, step.ms));
  }
  process.exit(0);
})();
`,
  );
  return file;
}
