/**
 * Temporary folders the test harness made and has not removed yet. Whatever a test forgets (an app it
 * never closed, a close that threw), the run's end removes them (preload.ts), so a run leaves none.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const open = new Set<string>();

/** A new folder under the system's temporary folder, removed at the latest when the run ends. */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  open.add(dir);
  return dir;
}

/** Removes `dir` now (and forgets it). */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  open.delete(dir);
}

/** Removes every folder not removed yet (the run's end). */
export function removeAllTempDirs(): void {
  for (const dir of open) removeTempDir(dir);
}
