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
  processes: Map<number, { ppid: number; name: string; ticks: number }>;
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
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      processes.set(Number(entry), { ppid: Number(rest[1]), name, ticks });
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
  const ownTicks = ticksBetween(before, after, withDescendants(after, roots));
  return Math.max(0, after.cpuBusy - before.cpuBusy - ownTicks) / TICKS_PER_SECOND;
}

/** CPU seconds `roots` and their descendants spent between the two snapshots. */
export function cpuSecondsOf(before: MachineTimes, after: MachineTimes, roots: number[]): number {
  return ticksBetween(before, after, withDescendants(after, roots)) / TICKS_PER_SECOND;
}

/** CPU seconds process `pid` alone spent between the snapshots (its children left out while they run). */
export function cpuSecondsOfProcess(before: MachineTimes, after: MachineTimes, pid: number): number {
  return ticksBetween(before, after, new Set([pid])) / TICKS_PER_SECOND;
}

/** CPU seconds the processes named `name` (their command, as `ps -o comm` shows it) spent between the snapshots. */
export function cpuSecondsNamed(before: MachineTimes, after: MachineTimes, name: string): number {
  const named = [...after.processes].filter(([, p]) => p.name === name).map(([pid]) => pid);
  return ticksBetween(before, after, new Set(named)) / TICKS_PER_SECOND;
}

/** CPU seconds all the CPUs were busy between the snapshots. */
export function busyCpuSeconds(before: MachineTimes, after: MachineTimes): number {
  return (after.cpuBusy - before.cpuBusy) / TICKS_PER_SECOND;
}

function withDescendants(times: MachineTimes, roots: number[]): Set<number> {
  const own = new Set(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, { ppid }] of times.processes) {
      if (!own.has(pid) && own.has(ppid)) {
        own.add(pid);
        grew = true;
      }
    }
  }
  return own;
}

function ticksBetween(before: MachineTimes, after: MachineTimes, pids: Set<number>): number {
  let ticks = 0;
  for (const pid of pids) {
    const now = after.processes.get(pid);
    if (now) ticks += now.ticks - (before.processes.get(pid)?.ticks ?? 0);
  }
  return ticks;
}
