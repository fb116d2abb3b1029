/** Starts a peer's server as a child process pinned to a core, its output in a log file; stops it. */
import { openSync } from "node:fs";
import { deferStop } from "./cleanup.ts";

export interface ServerProcess {
  pid: number;
  stop(): Promise<void>;
}

/**
 * Spawns `command` under `taskset -c core`, then polls `readyUrl` until it answers (any
 * status) within `timeoutMs`. Throws, with the log's path, if the process exits first.
 */
export async function startServerProcess(options: {
  name: string;
  command: string[];
  env: Record<string, string>;
  cwd: string;
  core: number;
  logFile: string;
  readyUrl: string;
  timeoutMs?: number;
}): Promise<ServerProcess> {
  const log = openSync(options.logFile, "w");
  const proc = Bun.spawn(["taskset", "-c", String(options.core), ...options.command], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdout: log,
    stderr: log,
  });
  const stop = deferStop(options.name, async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 5000);
    await proc.exited;
    clearTimeout(timer);
  });
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${options.name} exited; see ${options.logFile}`);
    const answered = await fetch(options.readyUrl).then(
      () => true,
      () => false,
    );
    if (answered) return { pid: proc.pid, stop };
    await Bun.sleep(200);
  }
  await stop();
  throw new Error(`${options.name} did not answer within the time limit; see ${options.logFile}`);
}
