/** Runs wrk (Debian's package; installed when missing) pinned to its own core and parses its figures. */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface WrkResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Answers whose body held "errors" (POST runs only; GraphQL errors come with status 200). */
  graphqlErrors: number;
}

export function ensureWrk(): void {
  if (Bun.which("wrk")) return;
  const install = Bun.spawnSync(["sh", "-c", "apt-get update -qq && apt-get install -y -qq wrk"], {
    stdout: "ignore",
    stderr: "inherit",
  });
  if (install.exitCode !== 0) throw new Error("wrk is missing: apt-get install wrk");
}

/**
 * Loads `url` for `seconds` with `connections`; `body` (with %n counters) makes it a POST,
 * sent with `Authorization: Bearer <token>` when a token is given and any extra `headers`.
 */
export async function runWrk(options: {
  url: string;
  seconds: number;
  connections: number;
  body?: string;
  token?: string;
  headers?: Record<string, string>;
  core?: number;
}): Promise<WrkResult> {
  const extraHeaders = Object.entries(options.headers ?? {}).map(([name, value]) => `${name}: ${value}`);
  const env: Record<string, string> = {
    ...process.env,
    TOKEN: options.token ?? "",
    EXTRA_HEADERS: extraHeaders.join("\n"),
    // %n's run part (wrk/post.lua): a run's keys are never an earlier run's, its warm-up's included.
    RUN_ID: Bun.randomUUIDv7().slice(-12),
  } as Record<string, string>;
  const args = ["wrk", "-t1", `-c${options.connections}`, `-d${options.seconds}s`, "--latency"];
  if (options.body !== undefined) {
    const file = join(tmpdir(), `wrk-body-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, options.body);
    env.BODY_FILE = file;
    args.push("-s", new URL("./wrk/post.lua", import.meta.url).pathname);
  }
  args.push(options.url);
  const command = options.core === undefined ? args : ["taskset", "-c", String(options.core), ...args];
  const proc = Bun.spawn(command, { env, stdout: "pipe", stderr: "pipe" });
  const output = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`wrk failed: ${await new Response(proc.stderr).text()}`);
  const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? Number.NaN);
  const latency = (label: string) => {
    const match = new RegExp(`^\\s+${label}%\\s+([\\d.]+)(us|ms|s)`, "m").exec(output);
    if (!match) return Number.NaN;
    const value = Number(match[1]);
    return match[2] === "us" ? value / 1000 : match[2] === "s" ? value * 1000 : value;
  };
  return {
    requestsPerSecond: number(/Requests\/sec:\s+([\d.]+)/),
    p50Ms: latency("50"),
    p99Ms: latency("99"),
    non2xx: number(/Non-2xx or 3xx responses:\s+(\d+)/) || 0,
    graphqlErrors: number(/GraphQL errors:\s+(\d+)/) || 0,
  };
}
