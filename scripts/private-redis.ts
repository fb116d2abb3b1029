/**
 * Starts a private `redis-server` on a free loopback port with its files in a
 * directory of ours (AOF on, so queued jobs survive a restart). Used by the
 * start command, the test harness and the benchmarks; the service itself
 * only ever takes a REDIS_URL.
 */
import { mkdirSync } from "node:fs";
import { connect } from "node:net";

export interface PrivateRedis {
  url: string;
  port: number;
  pid: number;
  /** Stops the server (SIGTERM: it flushes the AOF) and waits for it to exit. */
  stop(): Promise<void>;
  /** Kills the server at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
}

/** Finds a TCP port nobody listens on right now. */
export function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/**
 * Starts redis-server in `dir`; retries on another port if the chosen one is taken meanwhile.
 * `ownSession`: in a session of its own, so a Ctrl-C at the terminal (which signals the whole
 * foreground group) leaves it to the caller to stop after the processes that use it.
 */
export async function startPrivateRedis(
  dir: string,
  port = freePort(),
  options: { ownSession?: boolean } = {},
): Promise<PrivateRedis> {
  mkdirSync(dir, { recursive: true });
  for (let attempt = 0; attempt < 5; attempt++) {
    const proc = Bun.spawn(
      [
        "redis-server",
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir,
        "--appendonly",
        "yes",
        "--save",
        "",
        "--daemonize",
        "no",
        "--loglevel",
        "warning",
        "--protected-mode",
        "yes",
      ],
      { stdout: "ignore", stderr: "inherit", detached: options.ownSession ?? false },
    );
    if (await waitForPort(port, proc, 5000)) {
      const stopWith = async (signal: "SIGTERM" | "SIGKILL") => {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
        await proc.exited;
      };
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        pid: proc.pid,
        stop: () => stopWith("SIGTERM"),
        kill: () => stopWith("SIGKILL"),
      };
    }
    proc.kill("SIGKILL");
    port = freePort();
  }
  throw new Error("could not start redis-server (is it installed? apt-get install redis-server)");
}

async function waitForPort(
  port: number,
  proc: { exitCode: number | null },
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && proc.exitCode === null) {
    if (await canConnect(port)) return true;
    await Bun.sleep(25);
  }
  return false;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}
