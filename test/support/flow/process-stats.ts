/** What a running process uses, read from Linux /proc by its pid (the load scenario samples it). */
import { readFileSync } from "node:fs";

/** Resident memory of a process in MiB (Linux /proc); 0 when it is gone. */
export function residentMiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** CPU time a process has used so far, in ms (Linux /proc); 0 when it is gone. */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * How long a process's main thread (its event loop) has run on a CPU and
 * waited, runnable, for one so far, in ms (Linux /proc schedstat); zeros when it is gone.
 */
export function mainThreadSchedule(pid: number): { runMs: number; waitMs: number } {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, "utf8").trim().split(" ").map(Number);
    return { runMs: (run ?? 0) / 1e6, waitMs: (wait ?? 0) / 1e6 };
  } catch {
    return { runMs: 0, waitMs: 0 };
  }
}
