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
  /** Runs a disturbed workload got in all. */
  attempts: number;
  baseline: MeasuredRun;
  /** Ours first (SQLite, then PostgreSQL when measured), then the peers. */
  systems: SystemMeasurement[];
}

const workloads = Object.keys(WORKLOADS) as WorkloadName[];
const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "–");
const msText = (n: number) => `${fixed(n, 2)} ms`;
const times = (ratio: number) => `${fixed(ratio, 2)}×`;

/** Our service on each engine measured in `run` (SQLite first), and the peers. */
function roles(run: CompareRun) {
  const ours = run.systems.filter((s) => s.ours !== undefined);
  const peers = run.systems.filter((s) => s.ours === undefined);
  return {
    ours,
    peers,
    sqlite: ours.find((s) => s.ours === "sqlite"),
    postgres: ours.find((s) => s.ours === "postgres"),
    postgraphile: peers.find((p) => p.name.startsWith("PostGraphile")),
  };
}

const rate = (s: SystemMeasurement | undefined, w: WorkloadName) =>
  s === undefined ? Number.NaN : s.runs[w].requestsPerSecond;

function requestRows(run: CompareRun): string[][] {
  const { ours } = roles(run);
  const base = run.baseline.requestsPerSecond;
  const rows: string[][] = [
    [
      "bare Bun.serve JSON (baseline)",
      "–",
      fixed(base),
      msText(run.baseline.p50Ms),
      msText(run.baseline.p99Ms),
      ...ours.map(() => "–"),
      "100%",
      fixed(run.baseline.otherCpuSeconds, 1),
    ],
  ];
  for (const w of workloads) {
    run.systems.forEach((system, i) => {
      const r = system.runs[w];
      rows.push([
        i === 0 ? WORKLOADS[w] : "",
        system.name,
        fixed(r.requestsPerSecond),
        msText(r.p50Ms),
        msText(r.p99Ms),
        ...ours.map((mine) => (mine === system ? "–" : times(rate(mine, w) / r.requestsPerSecond))),
        `${fixed((r.requestsPerSecond / base) * 100, 1)}%`,
        fixed(r.otherCpuSeconds, 1),
      ]);
    });
  }
  return rows;
}

/** Per workload: each engine of ours against PostGraphile, and PostgreSQL against SQLite. */
function ratioRows(run: CompareRun): string[][] {
  const { sqlite, postgres, postgraphile } = roles(run);
  return workloads.map((w) => [
    WORKLOADS[w],
    times(rate(sqlite, w) / rate(postgraphile, w)),
    times(rate(postgres, w) / rate(postgraphile, w)),
    times(rate(postgres, w) / rate(sqlite, w)),
  ]);
}

/** The workloads the PostgreSQL engine's targets call reads (W4's upserts read their key first). */
const READS: WorkloadName[] = ["W1", "W2", "W4"];

/** "met" or "**not met**" with the figures that missed. */
function verdict(figures: { label: string; ratio: number; met: boolean }[]): string {
  const text = figures.map((f) => `${f.label} ${times(f.ratio)}`).join(", ");
  return `${text} — ${figures.every((f) => f.met) ? "met" : "**not met**"}`;
}

function targetLines(run: CompareRun): string[] {
  const { ours, peers, sqlite, postgres, postgraphile } = roles(run);
  if (!sqlite) return [];
  const lines = ["Targets (issue 10, ours on SQLite):", ""];
  for (const w of ["W1", "W2"] as const) {
    const ratio = rate(sqlite, w) / rate(postgraphile, w);
    lines.push(`- Ours ≥ 5× PostGraphile v5 on ${w}: ${verdict([{ label: w, ratio, met: ratio >= 5 }])}.`);
  }
  for (const mine of ours) {
    const behind = workloads.flatMap((w) =>
      peers
        .filter((p) => rate(p, w) >= rate(mine, w))
        .map((p) => `${w} (${p.name} ${times(rate(mine, w) / rate(p, w))})`),
    );
    lines.push(
      `- ${mine.name} ahead of both peers on every workload: ${behind.length === 0 ? "met" : `**not met** — not ahead on ${behind.join(", ")}`}.`,
    );
  }
  const w3 = rate(sqlite, "W3") / rate(postgraphile, "W3");
  lines.push(
    "",
    "Targets (issue 35, ours on SQLite):",
    "",
    `- Ours ≥ 3× PostGraphile v5 on W3 (single-insert mutations): ${verdict([{ label: "W3", ratio: w3, met: w3 >= 3 }])}.`,
  );
  if (!postgres) return lines;
  const against = (mine: SystemMeasurement, ws: WorkloadName[], floor: number) =>
    ws.map((w) => {
      const ratio = rate(mine, w) / rate(postgraphile, w);
      return { label: w, ratio, met: ratio >= floor };
    });
  lines.push("", "Targets (PostgreSQL engine, point 7):", "");
  for (const mine of [sqlite, postgres]) {
    lines.push(`- ${mine.name}, reads ≥ 3× PostGraphile v5: ${verdict(against(mine, READS, 3))}.`);
    lines.push(
      `- ${mine.name}, W3 single inserts ≥ 1.5× PostGraphile v5: ${verdict(against(mine, ["W3"], 1.5))}.`,
    );
  }
  const within = READS.map((w) => {
    const ratio = rate(postgres, w) / rate(sqlite, w);
    return { label: w, ratio, met: ratio >= 0.5 };
  });
  lines.push(
    `- ours on PostgreSQL within 2× of ours on SQLite on reads (ratio ≥ 0.50×): ${verdict(within)}.`,
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
    "# Side by side: ours (SQLite, PostgreSQL), PostGraphile v5, Parse Server",
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
        ...roles(run).ours.map((s) => `${s.name} ÷ this (req/s)`),
        "vs bare Bun.serve",
        "other work (CPU s)",
      ],
      requestRows(run),
    ),
    "",
    ...(roles(run).postgres
      ? [
          "Ratios of requests/s:",
          "",
          ...markdownTable(
            [
              "workload",
              "ours on SQLite ÷ PostGraphile v5",
              "ours on PostgreSQL ÷ PostGraphile v5",
              "ours on PostgreSQL ÷ ours on SQLite",
            ],
            ratioRows(run),
          ),
          "",
        ]
      : []),
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
    ...targetLines(run),
    "",
    `Same work everywhere: before measuring, each workload's answer was checked once for errors and its values counted (${run.systems
      .map((s) => s.name)
      .join(
        " / ",
      )}): ${values.join("; ")}. Error answers during the runs (non-2xx or GraphQL errors): ${errors.join(", ")}.`,
    "",
    "## Setup, and what could limit or favour each system",
    "",
    ...setupNotes(run.runtimes, run.attempts),
    "",
  ].join("\n");
}
