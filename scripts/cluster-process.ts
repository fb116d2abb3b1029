/**
 * One process of the local cluster (an API or a dispatcher), supervised: a
 * command and its environment in, a running child out, its output relayed
 * line by line under its name once it is ready. A child that exits while the
 * cluster runs (killed by hand, crashed) is started again on the same port
 * and environment, as a service manager would, unless it keeps dying at
 * start: then it is left down and the cluster says so.
 */
import { join } from "node:path";
import type { Subprocess } from "bun";

const ROOT = join(import.meta.dir, "..");

/** How long a process that exited waits before it is started again. */
const RESTART_DELAY_MS = 1000;
/** An exit this soon after a start counts as failing to start. */
const EARLY_EXIT_MS = 10_000;
/** Failing to start this many times in a row leaves the process down. */
const EARLY_EXITS_TOLERATED = 3;
/** How long a first start may take (PostgreSQL migrations included) before the cluster gives up. */
const START_TIMEOUT_MS = 60_000;
/** How long a stop waits after SIGTERM (the processes' own grace is 5 s) before SIGKILL. */
const STOP_TIMEOUT_MS = 15_000;

/**
 * Whether a process that exited unexpectedly is started again: not when each of its last
 * `EARLY_EXITS_TOLERATED` runs ended within `EARLY_EXIT_MS` of its start (it cannot start).
 */
export function shouldRestart(runs: readonly { startedAt: number; exitedAt: number }[]): boolean {
  const last = runs.slice(-EARLY_EXITS_TOLERATED);
  return !(
    last.length === EARLY_EXITS_TOLERATED && last.every((run) => run.exitedAt - run.startedAt < EARLY_EXIT_MS)
  );
}

export interface ProcessSpec {
  /** `api 1`, `dispatcher 2`: the prefix of its relayed lines. */
  name: string;
  /** The entry file, relative to the repository (`api/main.ts`). */
  entry: string;
  env: Record<string, string | undefined>;
  /** The line its stdout prints once it serves. */
  ready: string;
  /** Where it listens, for the summary. */
  url: string;
  /** Where relayed lines and the supervisor's notes go. */
  print: (line: string) => void;
}

export interface ClusterProcess {
  readonly spec: ProcessSpec;
  /** Pid of the running incarnation, 0 when none runs. */
  pid(): number;
  /**
   * Starts it and resolves with what its stdout printed up to the ready line (not relayed: the
   * cluster prints a summary instead). @throws with its output when it exits first or takes 60 s.
   */
  start(): Promise<string>;
  /** SIGTERM (SIGKILL after 15 s) and no restart. */
  stop(): Promise<void>;
}

/** A start's outcome: its stdout up to the ready line, or up to its exit when it never got there. */
interface Startup {
  ok: boolean;
  output: string;
}

/** Relays `stream` line by line through `onLine`. */
async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) onLine(line);
  }
  if (pending !== "") onLine(pending);
}

export function clusterProcess(spec: ProcessSpec): ClusterProcess {
  let child: Subprocess<"ignore", "pipe", "pipe"> | null = null;
  let stopping = false;
  const runs: { startedAt: number; exitedAt: number }[] = [];
  const relay = (line: string) => spec.print(`[${spec.name}] ${line}`);

  /** `ready` settles with the start-up output: `ok` once the ready line came, not when the process exited first. */
  function spawnOnce(): { ready: Promise<Startup>; exited: Promise<string> } {
    const startedAt = Date.now();
    const proc = Bun.spawn([process.execPath, spec.entry], {
      cwd: ROOT,
      env: spec.env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    child = proc;
    let startup = "";
    let isReady = false;
    let settle: (startup: Startup) => void = () => undefined;
    const ready = new Promise<Startup>((resolve) => {
      settle = resolve;
    });
    void readLines(proc.stdout, (line) => {
      if (isReady) return relay(line);
      startup += `${line}\n`;
      if (line.includes(spec.ready)) {
        isReady = true;
        settle({ ok: true, output: startup });
      }
    });
    // Errors are relayed at once, during start-up too.
    void readLines(proc.stderr, relay);
    const exited = proc.exited.then((code) => {
      runs.push({ startedAt, exitedAt: Date.now() });
      if (child === proc) child = null;
      const how = proc.signalCode ? `killed by ${proc.signalCode}` : `code ${code}`;
      if (!isReady) settle({ ok: false, output: `${startup}(exited: ${how})` });
      return how;
    });
    return { ready, exited };
  }

  function supervise(exited: Promise<string>, pid: number): void {
    void exited.then(async (how) => {
      // Waited out before a word is said: Ctrl-C in a terminal reaches every process of the group, the
      // children too, and the cluster's own stop comes within that time.
      await Bun.sleep(RESTART_DELAY_MS);
      if (stopping) return;
      const exit = `${spec.name} (pid ${pid}) exited (${how})`;
      if (!shouldRestart(runs))
        return spec.print(`${exit}, the ${EARLY_EXITS_TOLERATED}th time in a row at start: left down`);
      spec.print(`${exit}: starting it again`);
      const next = spawnOnce();
      const pidNow = child?.pid ?? 0;
      supervise(next.exited, pidNow);
      if ((await next.ready).ok) spec.print(`${spec.name} ready again (pid ${pidNow})`);
    });
  }

  return {
    spec,
    pid: () => child?.pid ?? 0,
    async start() {
      const first = spawnOnce();
      const pid = child?.pid ?? 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<Startup>((resolve) => {
        timer = setTimeout(
          () => resolve({ ok: false, output: `(not ready within ${START_TIMEOUT_MS / 1000} s)` }),
          START_TIMEOUT_MS,
        );
      });
      const startup = await Promise.race([first.ready, timeout]);
      // Cleared, not left to fire: a caller that is done must not be held open by it.
      clearTimeout(timer);
      if (!startup.ok) {
        stopping = true;
        child?.kill("SIGKILL");
        throw new Error(`${spec.name} did not start:\n${startup.output}`);
      }
      supervise(first.exited, pid);
      return startup.output;
    },
    async stop() {
      stopping = true;
      const current = child;
      if (!current) return;
      current.kill("SIGTERM");
      const timer = setTimeout(() => current.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await current.exited;
      clearTimeout(timer);
    },
  };
}
