/** Memory of the processes under test, from Linux /proc. */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * Proportional set size of `pids` together, in MiB: shared pages (PostgreSQL's
 * shared buffers) are split between the processes that map them, so the sum
 * counts them once. Processes gone meanwhile count 0.
 */
export function pssMiB(pids: number[]): number {
  let kib = 0;
  for (const pid of pids) {
    try {
      kib += Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
    } catch {
      // exited between listing and reading
    }
  }
  return kib / 1024;
}

/** The pids of `program` running in directory `cwd` (redis-server rewrites its command line, not its cwd). */
export function findPidsIn(program: string, cwd: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return (
          readFileSync(`/proc/${entry}/comm`, "utf8").trim() === program &&
          readlinkSync(`/proc/${entry}/cwd`) === cwd
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Pins every thread of `pid` to `core` (taskset -a). */
export function pinProcess(pid: number, core: number): void {
  Bun.spawnSync(["taskset", "-a", "-p", "-c", String(core), String(pid)], { stdout: "ignore" });
}
