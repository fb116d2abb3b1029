/**
 * Side by side with the systems users would pick instead (issue 10): ours (on
 * SQLite, then on PostgreSQL), PostGraphile v5 and Parse Server, on the same
 * machine, the same dataset, in the same run, with the same four GraphQL
 * workloads under wrk, plus the bare Bun.serve baseline. Installs what is missing (wrk, PostgreSQL via apt; the
 * peers via npm into bench/.peers), runs one system at a time pinned to core 0
 * with wrk on core 1, stops everything it started (also on Ctrl-C).
 * Run: bun bench/compare.ts [seconds] [attempts] [--without-parse]  → bench/results/compare.md
 *   attempts: runs of a disturbed workload in all (default 3; 1 on a machine that stays busy,
 *   where every run is disturbed and retrying only makes the run longer).
 */
import { mkdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { deferStop, isSignalled, stopAll, stopAllOnSignals } from "./compare/cleanup.ts";
import { ensureDebianPackages, ensurePeers, nodeBinary } from "./compare/install.ts";
import { waitForQuietMachine } from "./compare/machine-load.ts";
import {
  type MeasureOptions,
  measuredRun,
  measureSystem,
  type SystemMeasurement,
} from "./compare/measure.ts";
import { startOurs } from "./compare/ours.ts";
import { startParse } from "./compare/parse.ts";
import { startPostgraphile } from "./compare/postgraphile.ts";
import { startPrivatePostgres } from "./compare/postgres.ts";
import { renderReport } from "./compare/report.ts";
import type { SystemUnderTest } from "./compare/system.ts";
import { ensureWrk } from "./run-wrk.ts";
import { machine, startBareServer, writeResultsFile } from "./support.ts";

const WITHOUT_PARSE = process.argv.includes("--without-parse");
const positional = process.argv.slice(2).filter((arg) => !arg.startsWith("--"));
const SECONDS = Number(positional[0] ?? 10);
const ATTEMPTS = Number(positional[1] ?? 3);
const SERVER_CORE = 0;
const LOAD_CORE = 1;
const WORK_DIR = new URL("./.work/compare/", import.meta.url).pathname;
const options: MeasureOptions = {
  seconds: SECONDS,
  warmupSeconds: Math.min(3, SECONDS),
  connections: 32,
  loadCore: LOAD_CORE,
  attempts: ATTEMPTS,
};

/** The 1, 5 and 15 minute load averages: other work on the machine shows here. */
const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" / ");

/** The service's commit, and whether its source had uncommitted changes when measured. */
function serviceRevision(): string {
  const git = (...args: string[]) =>
    Bun.spawnSync(["git", ...args])
      .stdout.toString()
      .trim();
  const dirty = git("status", "--porcelain", "--", "api", "common") !== "";
  return `${git("rev-parse", "--short", "HEAD")}${dirty ? " with uncommitted changes under api/ or common/" : ""}`;
}

/** Measures a started system, then stops it, so one system runs at a time. */
async function measured(start: Promise<SystemUnderTest>): Promise<SystemMeasurement> {
  const system = await start;
  console.log(`compare: ${system.name} loaded in ${system.load.seconds.toFixed(1)} s (${system.load.route})`);
  try {
    return await measureSystem(system, options);
  } finally {
    await system.stop();
  }
}

async function main(): Promise<void> {
  const began = performance.now();
  const loadBefore = loadAverage();
  const revision = serviceRevision();
  ensureDebianPackages();
  ensureWrk();
  ensurePeers();
  mkdirSync(WORK_DIR, { recursive: true });

  const bare = await startBareServer(SERVER_CORE);
  const stopBare = deferStop("bare Bun.serve", bare.stop);
  const busyBefore = await waitForQuietMachine(120_000);
  const baseline = await measuredRun(
    { url: bare.url, seconds: SECONDS, connections: options.connections, core: LOAD_CORE },
    [],
  );
  await stopBare();

  const systems = [await measured(startOurs(SERVER_CORE, { engine: "sqlite" }))];
  const postgres = await startPrivatePostgres(join(WORK_DIR, "pg"), SERVER_CORE);
  const stopPostgres = deferStop("PostgreSQL", postgres.stop);
  systems.push(await measured(startOurs(SERVER_CORE, { engine: "postgres", postgres })));
  systems.push(await measured(startPostgraphile(postgres, SERVER_CORE, WORK_DIR)));
  if (!WITHOUT_PARSE) systems.push(await measured(startParse(postgres, SERVER_CORE, WORK_DIR)));
  await stopPostgres();

  const report = renderReport({
    machine: machine(),
    date: new Date().toISOString().slice(0, 10),
    command: `bun bench/compare.ts ${process.argv.slice(2).join(" ")}`.trimEnd(),
    revision,
    seconds: SECONDS,
    warmupSeconds: options.warmupSeconds,
    connections: options.connections,
    loadAverage: loadBefore,
    busyBefore,
    cores: cpus().length,
    totalMinutes: (performance.now() - began) / 60_000,
    runtimes: { bun: Bun.version, node: Bun.spawnSync([nodeBinary(), "--version"]).stdout.toString().trim() },
    attempts: ATTEMPTS,
    baseline,
    systems,
  });
  writeResultsFile(new URL("./results/compare.md", import.meta.url), report);
  console.log(`\n${report}`);
}

stopAllOnSignals();
try {
  await main();
} catch (error) {
  if (!isSignalled()) throw error;
} finally {
  await stopAll();
}
