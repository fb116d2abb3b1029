/** The tables of bench/results/dispatch.md, from the runs' figures. */
import type { ThreadCpu } from "./processes.ts";

export interface RunResult {
  name: string;
  /** Deliveries/s the measured receivers answered during the window. */
  perSecond: number;
  /** CPU use during the window, 1 = one core: the consumer (core 0), Redis and the receivers (core 1). */
  cpu: { consumer: number; redis: number; receivers: number };
  /** The consumer's CPU use by thread, 1 = one core (the parts of `cpu.consumer`). */
  consumerThreads: ThreadCpu;
  /** CPU seconds processes outside the benchmark used during the window. */
  otherCpuSeconds: number;
}

export interface DispatchBench {
  rounds: {
    bare: RunResult;
    /** The bare worker writing one durable row per delivery (group-committed SQLite). */
    durable: RunResult;
    /** The same, the row committed before the request and completed after (the delivery log's two writes). */
    twoPhase: RunResult;
    dispatcher: RunResult;
    allFast: RunResult;
    oneSlow: RunResult;
  }[];
  defaultLimit: RunResult | null;
  /** Half the receivers slow, their limits filling every worker slot: with spare workers and without. */
  manySlow: { spares: RunResult; noSpares: RunResult } | null;
}

const pct = (share: number) => `${(share * 100).toFixed(0)}%`;
const range = (values: number[]) => `${pct(Math.min(...values))} to ${pct(Math.max(...values))}`;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const HEADER = [
  "| round | run | deliveries/s | ratio | consumer CPU | consumer CPU µs per delivery | Redis CPU | receivers CPU | other work (CPU s) |",
  "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
];

const BASELINE_HEADER = [
  "| round | run | deliveries/s | ÷ durable | ÷ bare | consumer CPU | consumer CPU µs per delivery | of which main thread / HTTP client / other threads | Redis CPU | receivers CPU | other work (CPU s) |",
  "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
];

/** µs of CPU per delivery for a use of `share` of a core during `r`. */
const perDelivery = (r: RunResult, share: number) =>
  r.perSecond > 0 ? ((share * 1e6) / r.perSecond).toFixed(0) : "–";

/**
 * The table cells of `r` from its throughput on (ratios: one or more cells, already joined); with
 * `threads`, the consumer's CPU per delivery split by thread as well.
 */
function row(round: string, r: RunResult, ratios: string, threads = false): string {
  const { main, http, other } = r.consumerThreads;
  const split = threads
    ? ` ${perDelivery(r, main)} / ${perDelivery(r, http)} / ${perDelivery(r, other)} |`
    : "";
  return `| ${round} | ${r.name} | ${r.perSecond.toFixed(0)} | ${ratios} | ${r.cpu.consumer.toFixed(2)} | ${perDelivery(r, r.cpu.consumer)} |${split} ${r.cpu.redis.toFixed(2)} | ${r.cpu.receivers.toFixed(2)} | ${r.otherCpuSeconds.toFixed(1)} |`;
}

/** A round's four runs against both baselines: cells "÷ durable | ÷ bare". */
function baselineRows(round: string, r: DispatchBench["rounds"][number]): string[] {
  const of = (x: RunResult, base: RunResult) => pct(x.perSecond / base.perSecond);
  return [r.bare, r.durable, r.twoPhase, r.dispatcher].map((x) =>
    row(round, x, `${of(x, r.durable)} | ${of(x, r.bare)}`, true),
  );
}

/** The results sections: the ratios against the baselines, then isolation; medians over the rounds. */
export function dispatchReport(bench: DispatchBench, slowMs: number): string[] {
  const ratios = bench.rounds.map((r) => r.dispatcher.perSecond / r.bare.perSecond);
  const durableRatios = bench.rounds.map((r) => r.dispatcher.perSecond / r.durable.perSecond);
  const durableOfBare = bench.rounds.map((r) => r.durable.perSecond / r.bare.perSecond);
  const twoPhaseRatios = bench.rounds.map((r) => r.dispatcher.perSecond / r.twoPhase.perSecond);
  const twoPhaseOfDurable = bench.rounds.map((r) => r.twoPhase.perSecond / r.durable.perSecond);
  const kept = bench.rounds.map((r) => r.oneSlow.perSecond / r.allFast.perSecond);
  const bareMedian = median(bench.rounds.map((r) => r.bare.perSecond));
  const durableMedian = median(bench.rounds.map((r) => r.durable.perSecond));
  /** The median over the rounds of the picked run's CPU per delivery (of the consumer, or of one of its thread groups). */
  const cpuPerDelivery = (
    pick: (r: DispatchBench["rounds"][number]) => RunResult,
    share: (x: RunResult) => number = (x) => x.cpu.consumer,
  ) => median(bench.rounds.map(pick).map((x) => (share(x) * 1e6) / Math.max(1, x.perSecond))).toFixed(0);
  /** "main / HTTP / other" medians of the picked run's CPU per delivery by thread. */
  const threadSplit = (pick: (r: DispatchBench["rounds"][number]) => RunResult) =>
    (["main", "http", "other"] as const)
      .map((thread) => cpuPerDelivery(pick, (x) => x.consumerThreads[thread]))
      .join(" / ");
  const limit = bench.defaultLimit;
  const allFastMedian = median(bench.rounds.map((r) => r.allFast.perSecond));
  const manySlow = bench.manySlow;
  return [
    "## One fast receiver, against the durable and the bare baselines",
    "",
    ...BASELINE_HEADER,
    ...bench.rounds.flatMap((r, i) => baselineRows(String(i + 1), r)),
    ...(limit
      ? [
          row(
            "–",
            limit,
            `${pct(limit.perSecond / durableMedian)} of the median | ${pct(limit.perSecond / bareMedian)} of the median`,
            true,
          ),
        ]
      : []),
    "",
    `Median ratio, dispatcher ÷ durable baseline: **${pct(median(durableRatios))}** (target ≥ 85%; rounds: ${range(durableRatios)}).`,
    `Dispatcher ÷ bare worker: **${pct(median(ratios))}** (rounds: ${range(ratios)}); durable ÷ bare: ${pct(median(durableOfBare))} (rounds: ${range(durableOfBare)}).`,
    `Beside them: two-phase durable ÷ durable ${pct(median(twoPhaseOfDurable))} (rounds: ${range(twoPhaseOfDurable)}): what the delivery log's write before each request costs on its own;`,
    `dispatcher ÷ two-phase durable ${pct(median(twoPhaseRatios))} (rounds: ${range(twoPhaseRatios)}).`,
    `Median consumer CPU per delivery: bare ${cpuPerDelivery((r) => r.bare)} µs, durable ${cpuPerDelivery((r) => r.durable)} µs, two-phase durable ${cpuPerDelivery((r) => r.twoPhase)} µs, dispatcher ${cpuPerDelivery((r) => r.dispatcher)} µs;`,
    `by thread (main / HTTP client / other: Bun's JIT compilers, its allocator's scavenger, the dispatcher's WAL checkpointer): bare ${threadSplit((r) => r.bare)} µs, durable ${threadSplit((r) => r.durable)} µs, two-phase durable ${threadSplit((r) => r.twoPhase)} µs, dispatcher ${threadSplit((r) => r.dispatcher)} µs.`,
    "In the first rows the dispatcher may hold as many requests in flight to the one receiver as the baselines do;",
    "with the default endpoint limit (8) it holds at most 8 while its 32 worker slots take jobs.",
    "",
    `## Isolation: one receiver answering after ${slowMs / 1000} s`,
    "",
    "Jobs round-robin over five webhooks; counted: the four receivers that answer at once. Dispatcher defaults",
    "(endpoint limit 8).",
    "",
    ...HEADER,
    ...bench.rounds.flatMap((r, i) => [
      row(String(i + 1), r.allFast, "100%"),
      row(String(i + 1), r.oneSlow, pct(kept[i] ?? 0)),
    ]),
    "",
    `Median throughput to the other receivers with one answering after ${slowMs / 1000} s: **${pct(median(kept))}**`,
    `of the same run with all answering at once (rounds: ${range(kept)}), a drop of ${pct(Math.max(0, 1 - median(kept)))} (target: at most 10%).`,
    "The reference delivers the fifth receiver's share of the jobs too; with that receiver slow, its jobs beyond",
    "its 8 slots are parked instead (each taken up about once, then queued at the rate it answers), which costs less.",
    ...(manySlow
      ? [
          "",
          `## Four receivers of eight answering after ${slowMs / 1000} s`,
          "",
          "Jobs round-robin over eight webhooks; counted: the four receivers that answer at once. The slow four's",
          "limits (8 each) add up to all 32 worker slots. Ratio: against the median run above with all five answering at once.",
          "",
          ...HEADER,
          row("–", manySlow.spares, pct(manySlow.spares.perSecond / allFastMedian)),
          row("–", manySlow.noSpares, pct(manySlow.noSpares.perSecond / allFastMedian)),
          "",
          "By default an attempt still waiting for its answer after 0.5 s hands its worker slot to a spare worker",
          "(`DISPATCH_SLOW_CONCURRENCY`, default 64); with 0, the slow endpoints' attempts keep the slots they hold.",
        ]
      : []),
  ];
}
