/** Benchmark processes pinned to a core: started, awaited until their first line, stopped for sure. */
import { readdirSync, readFileSync } from "node:fs";

export interface Pinned {
  pid: number;
  /** The first line the process printed (its ready signal). */
  firstLine: string;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const READY_TIMEOUT_MS = 20_000;
// Every process started here and not yet exited, for killAll.
const running = new Set<number>();

/** Adds a process started elsewhere (the private Redis) to those killAll kills. */
export function track(pid: number): void {
  running.add(pid);
}

/** Kills every process started or tracked here that is still running (on an interrupt). */
export function killAll(): void {
  for (const pid of running) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Pins a running process (every thread) to `core`. */
export function pinToCore(pid: number, core: number): void {
  const pinned = Bun.spawnSync(["taskset", "-a", "-cp", String(core), String(pid)], { stdout: "ignore" });
  if (pinned.exitCode !== 0) throw new Error(`taskset could not pin ${pid} to core ${core}`);
}

/** The user + system CPU seconds in a /proc `stat` line (of a process or a thread; clock ticks of 1/100 s). */
function statCpuSeconds(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU time (user + system) a process has used, in seconds (Linux /proc). */
export function cpuSeconds(pid: number): number {
  return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

/** A process's CPU use by thread: its main thread (the event loop), Bun's HTTP client thread (fetch), the rest. */
export interface ThreadCpu {
  main: number;
  http: number;
  other: number;
}

/** CPU time (user + system) each of a process's threads has used, in seconds, grouped as ThreadCpu (Linux /proc). */
export function threadCpuSeconds(pid: number): ThreadCpu {
  const split: ThreadCpu = { main: 0, http: 0, other: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const seconds = statCpuSeconds(stat);
    if (tid === String(pid)) split.main += seconds;
    else if (name === "HTTP Client") split.http += seconds;
    else split.other += seconds;
  }
  return split;
}

/**
 * Runs `bun <args>` pinned to `core` with `env` added, and waits for its
 * first stdout line. Output after that is drained; the last few KB of stderr
 * are kept for the error when it exits early or never gets ready.
 */
export async function startPinned(
  core: number,
  args: string[],
  env: Record<string, string> = {},
): Promise<Pinned> {
  const proc = Bun.spawn(["taskset", "-c", String(core), process.execPath, ...args], {
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  running.add(proc.pid);
  void proc.exited.then(() => running.delete(proc.pid));
  let errors = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) {
      errors = (errors + decoder.decode(chunk, { stream: true })).slice(-4000);
    }
  })();
  const stop = async (graceMs = 15_000) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill("SIGTERM");
    const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
    if (!exited) {
      proc.kill("SIGKILL");
      await proc.exited;
    }
  };

  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let output = "";
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!output.includes("\n")) {
    const next = await Promise.race([
      reader.read(),
      Bun.sleep(Math.max(0, deadline - Date.now())).then(() => null),
    ]);
    if (next === null || next.done) {
      await stop(1000);
      throw new Error(`${args[0]} ${next === null ? "never got ready" : "exited"}: ${errors}`);
    }
    output += decoder.decode(next.value, { stream: true });
  }
  void (async () => {
    while (!(await reader.read()).done) {
      // drained, so the process never blocks on a full pipe
    }
  })();
  return { pid: proc.pid, firstLine: output.slice(0, output.indexOf("\n")), stop };
}
