/** Measurements in, the Markdown of bench/results/compare.md out (pure). */
import { SIZES } from "./dataset.ts";
import { markdownTable } from "./markdown-table.ts";
import type { MeasuredRun, SystemMeasurement } from "./measure.ts";
import { setupNotes } from "./setup-notes.ts";
import { WORKLOADS, type WorkloadName } from "./system.ts";

export interface CompareRun {
  machine: string;
  date: string;
  command: string;
  /** The service's commit (and whether api/ or common/ had uncommitted changes). */
  revision: string;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  loadAverage: string;
  /** Share (0–1) of the CPUs busy with other work just before the baseline. */
  busyBefore: number;
  cores: number;
  totalMinutes: number;
  runtimes: { bun: string; node: string };
  baseline: MeasuredRun;
  /** Ours first, then the peers. */
  systems: SystemMeasurement[];
}

const workloads = Object.keys(WORKLOADS) as WorkloadName[];
const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "–");
const msText = (n: number) => `${fixed(n, 2)} ms`;
const times = (ratio: number) => `${fixed(ratio, 2)}×`;

function requestRows(run: CompareRun): string[][] {
  const [ours] = run.systems;
  const base = run.baseline.requestsPerSecond;
  const rows: string[][] = [
    [
      "bare Bun.serve JSON (baseline)",
      "–",
      fixed(base),
      msText(run.baseline.p50Ms),
      msText(run.baseline.p99Ms),
      "–",
      "100%",
      fixed(run.baseline.otherCpuSeconds, 1),
    ],
  ];
  for (const w of workloads) {
    for (const system of run.systems) {
      const r = system.runs[w];
      const ratio =
        system === ours ? "–" : times((ours?.runs[w].requestsPerSecond ?? 0) / r.requestsPerSecond);
      rows.push([
        system === ours ? WORKLOADS[w] : "",
        system.name,
        fixed(r.requestsPerSecond),
        msText(r.p50Ms),
        msText(r.p99Ms),
        ratio,
        `${fixed((r.requestsPerSecond / base) * 100, 1)}%`,
        fixed(r.otherCpuSeconds, 1),
      ]);
    }
  }
  return rows;
}

function targetLines(run: CompareRun): string[] {
  const [ours, ...peers] = run.systems;
  if (!ours) return [];
  const rate = (s: SystemMeasurement, w: WorkloadName) => s.runs[w].requestsPerSecond;
  const postgraphile = peers.find((p) => p.name.startsWith("PostGraphile"));
  const lines = (["W1", "W2"] as const).map((w) => {
    const ratio = postgraphile ? rate(ours, w) / rate(postgraphile, w) : Number.NaN;
    return `- Ours ≥ 5× PostGraphile v5 on ${w}: ${times(ratio)} — ${ratio >= 5 ? "met" : "**not met**"}.`;
  });
  const behind = workloads.flatMap((w) =>
    peers
      .filter((p) => rate(p, w) >= rate(ours, w))
      .map((p) => `${w} (${p.name} ${times(rate(ours, w) / rate(p, w))})`),
  );
  lines.push(
    `- Ours ahead of both peers on every workload: ${behind.length === 0 ? "met" : `**not met** — not ahead on ${behind.join(", ")}`}.`,
  );
  return lines;
}

/** The whole results file. */
export function renderReport(run: CompareRun): string {
  const errors = run.systems.map(
    (s) => `${s.name} ${workloads.reduce((n, w) => n + s.runs[w].non2xx + s.runs[w].graphqlErrors, 0)}`,
  );
  const values = workloads.map((w) => {
    const counts = run.systems.map((s) => s.values[w]);
    return `${w} ${counts.join(" / ")}${counts.every((n) => n === counts[0]) ? "" : " (**differ**)"}`;
  });
  return [
    "# Side by side: ours, PostGraphile v5, Parse Server",
    "",
    `Machine: ${run.machine}. Date: ${run.date}. Command: \`${run.command}\` (${run.totalMinutes.toFixed(1)} min in all). Service at ${run.revision}.`,
    `Each workload: ${run.seconds} s measured after a ${run.warmupSeconds} s warm-up, wrk 1 thread × ${run.connections} connections pinned to core 1; the server, with its database or Redis, pinned to core 0; loopback; one system running at a time. Load average before the run (1 / 5 / 15 min): ${run.loadAverage}; CPUs busy with other work just before measuring: ${fixed(run.busyBefore * 100)}%. "Other work" is the CPU time processes outside this run used during each measured run (out of ${run.cores * run.seconds} CPU s on ${run.cores} cores): well above 0 means the figure was disturbed.`,
    `Dataset in every system: ${SIZES.regions} Regions, ${SIZES.accounts.toLocaleString("en")} Accounts, ${SIZES.contacts.toLocaleString("en")} Contacts, ${SIZES.resources} Resources, ${SIZES.jobs.toLocaleString("en")} Jobs, ${(SIZES.jobs * 1.5).toLocaleString("en")} JobAllocations (bench/compare/dataset.ts).`,
    "",
    ...markdownTable(
      [
        "workload",
        "system",
        "requests/s",
        "p50",
        "p99",
        "ours ÷ this (req/s)",
        "vs bare Bun.serve",
        "other work (CPU s)",
      ],
      requestRows(run),
    ),
    "",
    ...markdownTable(
      ["system", "server RSS (MiB, max after a workload)", "beside it (MiB)", "dataset load", "load route"],
      run.systems.map((s) => [
        s.name,
        fixed(s.serverMiB),
        `${fixed(s.storeMiB)}: ${s.storeLabel}`,
        `${fixed(s.load.seconds, 1)} s`,
        s.load.route,
      ]),
    ),
    "",
    "Targets (issue 10):",
    "",
    ...targetLines(run),
    "",
    `Same work everywhere: before measuring, each workload's answer was checked once for errors and its values counted (ours / ${run.systems
      .slice(1)
      .map((s) => s.name)
      .join(
        " / ",
      )}): ${values.join("; ")}. Error answers during the runs (non-2xx or GraphQL errors): ${errors.join(", ")}.`,
    "",
    "## Setup, and what could limit or favour each system",
    "",
    ...setupNotes(run.runtimes),
    "",
  ].join("\n");
}
