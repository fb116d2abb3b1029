/**
 * Other work on the machine, from Linux /proc: how busy the CPUs are before the
 * run starts, and how much CPU time processes outside the run used while it
 * measured, so a disturbed figure is flagged rather than silently published.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on Linux x86-64). */
const TICKS_PER_SECOND = 100;

/** Clock ticks of all CPUs so far: busy (user, nice, system; interrupts left out) and in all. */
function cpuTotals(): { busy: number; total: number } {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const [user = 0, nice = 0, system = 0] = fields;
  return { busy: user + nice + system, total: fields.reduce((sum, n) => sum + n, 0) };
}

/** The share (0–1) of all CPUs busy during the next `ms` milliseconds. */
async function cpuBusyShare(ms: number): Promise<number> {
  const before = cpuTotals();
  await Bun.sleep(ms);
  const after = cpuTotals();
  return (after.busy - before.busy) / Math.max(1, after.total - before.total);
}

/**
 * Waits (at most `limitMs`) until the CPUs stay below `threshold` busy for 5 s.
 * Returns the last share measured, so the report can state it.
 */
export async function waitForQuietMachine(limitMs: number, threshold = 0.1): Promise<number> {
  const deadline = Date.now() + limitMs;
  let share = await cpuBusyShare(5000);
  while (share >= threshold && Date.now() < deadline) {
    console.log(`compare: the CPUs are ${(share * 100).toFixed(0)}% busy with other work; waiting`);
    share = await cpuBusyShare(5000);
  }
  return share;
}

/** What a run's disturbance is computed from: the CPUs' ticks and every process's, at one moment. */
export interface MachineTimes {
  cpuBusy: number;
  processes: Map<number, { ppid: number; ticks: number }>;
}

/** The CPUs' busy ticks, and every process's parent and CPU ticks so far (its own and its reaped children's). */
export function machineTimes(): MachineTimes {
  const processes: MachineTimes["processes"] = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after "(comm)": state ppid … utime stime cutime cstime (14th to 17th); the
      // children's part holds children that exited and were waited for (wrk, PostgreSQL backends).
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ticks = rest.slice(11, 15).reduce((sum, n) => sum + Number(n), 0);
      processes.set(Number(entry), { ppid: Number(rest[1]), ticks });
    } catch {
      // exited while listing
    }
  }
  return { cpuBusy: cpuTotals().busy, processes };
}

/**
 * CPU seconds the machine spent between the two snapshots on anything but `roots` and
 * their descendants: all busy time minus theirs, so short-lived processes count too.
 * Kernel threads doing the run's own I/O count as other work (a few hundredths).
 */
export function foreignCpuSeconds(before: MachineTimes, after: MachineTimes, roots: number[]): number {
  const own = new Set(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, { ppid }] of after.processes) {
      if (!own.has(pid) && own.has(ppid)) {
        own.add(pid);
        grew = true;
      }
    }
  }
  let ownTicks = 0;
  for (const pid of own) {
    const now = after.processes.get(pid);
    if (now) ownTicks += now.ticks - (before.processes.get(pid)?.ticks ?? 0);
  }
  return Math.max(0, after.cpuBusy - before.cpuBusy - ownTicks) / TICKS_PER_SECOND;
}
