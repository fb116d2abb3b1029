/**
 * Measures one loaded system: checks each workload's answer once (no errors;
 * its number of values, compared across systems by the caller), then per
 * workload a wrk warm-up and the measured run (again if other work disturbed
 * it), with memory sampled after each.
 */
import { cpus } from "node:os";
import { runWrk, type WrkResult } from "../run-wrk.ts";
import { foreignCpuSeconds, machineTimes, waitForQuietMachine } from "./machine-load.ts";
import { type SystemUnderTest, WORKLOADS, type WorkloadName } from "./system.ts";

/** A measured wrk run, with the CPU seconds other processes on the machine used meanwhile. */
export interface MeasuredRun extends WrkResult {
  otherCpuSeconds: number;
}

export interface SystemMeasurement {
  name: string;
  ours: SystemUnderTest["ours"];
  load: SystemUnderTest["load"];
  runs: Record<WorkloadName, MeasuredRun>;
  /** Leaf values in each workload's `data` (W1 100, W2 70, W3 1, W4 10 when all answer alike). */
  values: Record<WorkloadName, number>;
  /** The highest samples, in MiB. */
  serverMiB: number;
  storeMiB: number;
  storeLabel: string;
}

export interface MeasureOptions {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  loadCore: number;
  /** Runs of a disturbed workload in all (the first included), the least disturbed kept. */
  attempts: number;
}

const workloadNames = Object.keys(WORKLOADS) as WorkloadName[];

/** Counts the non-object values in `value` (nulls included): the fields a client gets back. */
function countValues(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + countValues(item), 0);
  if (value !== null && typeof value === "object") {
    return Object.values(value).reduce((sum: number, item) => sum + countValues(item), 0);
  }
  return 1;
}

async function probe(system: SystemUnderTest, workload: WorkloadName): Promise<number> {
  const response = await fetch(system.url, {
    method: "POST",
    headers: { ...system.headers, "content-type": "application/json" },
    body: system.bodies[workload].replaceAll("%n", `probe-${workload}`),
  });
  const answer = (await response.json()) as { data?: unknown; errors?: unknown };
  if (!response.ok || answer.errors || !answer.data) {
    throw new Error(
      `${system.name} ${workload} answered ${response.status}: ${JSON.stringify(answer).slice(0, 800)}`,
    );
  }
  return countValues(answer.data);
}

/** Runs wrk once, counting the CPU time that processes outside `ownPids` (and this process tree) used meanwhile. */
export async function measuredRun(
  options: Parameters<typeof runWrk>[0],
  ownPids: number[],
): Promise<MeasuredRun> {
  const before = machineTimes();
  const result = await runWrk(options);
  const otherCpuSeconds = foreignCpuSeconds(before, machineTimes(), [process.pid, ...ownPids]);
  return { ...result, otherCpuSeconds };
}

/** A run counts as disturbed when other processes used more than this share of the CPUs meanwhile. */
const DISTURBED_SHARE = 0.1;

/**
 * Warm-up then measured run of one workload; a disturbed run is retried (at most
 * `options.attempts` in all) once the machine is quiet again, and the least disturbed one kept.
 */
async function measureWorkload(
  system: SystemUnderTest,
  workload: WorkloadName,
  options: MeasureOptions,
): Promise<MeasuredRun> {
  const run = (seconds: number) =>
    measuredRun(
      {
        url: system.url,
        seconds,
        connections: options.connections,
        body: system.bodies[workload],
        headers: system.headers,
        core: options.loadCore,
      },
      system.pids(),
    );
  const attempt = async () => {
    if (options.warmupSeconds > 0) await run(options.warmupSeconds);
    return run(options.seconds);
  };
  const limit = DISTURBED_SHARE * cpus().length * options.seconds;
  let best = await attempt();
  for (let n = 2; n <= options.attempts && best.otherCpuSeconds > limit; n++) {
    console.log(
      `  ${system.name} ${workload}: other work used ${best.otherCpuSeconds.toFixed(1)} CPU s meanwhile; measuring again`,
    );
    await waitForQuietMachine(30_000);
    const next = await attempt();
    if (next.otherCpuSeconds < best.otherCpuSeconds) best = next;
  }
  return best;
}

/** Runs every workload against `system` (which stays running; the caller stops it). */
export async function measureSystem(
  system: SystemUnderTest,
  options: MeasureOptions,
): Promise<SystemMeasurement> {
  const values = {} as Record<WorkloadName, number>;
  for (const workload of workloadNames) values[workload] = await probe(system, workload);
  const runs = {} as Record<WorkloadName, MeasuredRun>;
  const memory = { serverMiB: 0, storeMiB: 0, storeLabel: "" };
  for (const workload of workloadNames) {
    const r = await measureWorkload(system, workload, options);
    runs[workload] = r;
    const sample = system.memory();
    memory.serverMiB = Math.max(memory.serverMiB, sample.serverMiB);
    memory.storeMiB = Math.max(memory.storeMiB, sample.storeMiB);
    memory.storeLabel = sample.storeLabel;
    console.log(
      `  ${system.name} ${workload}: ${r.requestsPerSecond.toFixed(0)} req/s, p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, errors ${r.non2xx + r.graphqlErrors}, other work ${r.otherCpuSeconds.toFixed(1)} CPU s`,
    );
  }
  return { name: system.name, ours: system.ours, load: system.load, runs, values, ...memory };
}
