/**
 * The exports folder's one disk budget (`log_export`), shared by the exports going at once. The
 * folder is measured when an export starts and no other is going; from then on every byte any
 * export writes comes out of what was left, so exports side by side never pass the budget
 * together (each measuring the folder on its own did: two large ones both saw room for one).
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** The room of each exports folder with exports going, by folder. */
const rooms = new Map<string, ExportRoom>();

export class ExportRoom {
  private going = 0;
  private left = 0;

  private constructor(
    private readonly dir: string,
    private readonly budget: number,
  ) {}

  /** The room of folder `dir` under `budget`, for one export: `end()` it once the export is over, however it went. */
  static enter(dir: string, budget: number): ExportRoom {
    const room = rooms.get(dir) ?? new ExportRoom(dir, budget);
    // Measured before it counts as going: a folder that cannot be read fails this export only.
    if (room.going === 0) room.left = room.budget - folderBytes(room.dir);
    room.going++;
    rooms.set(dir, room);
    return room;
  }

  /** True when nothing more fits. */
  get full(): boolean {
    return this.left <= 0;
  }

  /** Takes `bytes` for a chunk about to be written: false, and nothing taken, when they do not fit. */
  take(bytes: number): boolean {
    if (bytes > this.left) return false;
    this.left -= bytes;
    return true;
  }

  /** Gives back what an export took whose file was removed. */
  giveBack(bytes: number): void {
    this.left += bytes;
  }

  /** One export is over; the last one's end lets the next export measure the folder again. */
  end(): void {
    if (--this.going === 0 && rooms.get(this.dir) === this) rooms.delete(this.dir);
  }
}

/** The bytes of the files in `dir` (what is removed meanwhile counts for nothing). */
function folderBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    try {
      const stat = statSync(path.join(dir, name));
      if (stat.isFile()) total += stat.size;
    } catch {
      // removed meanwhile
    }
  }
  return total;
}
