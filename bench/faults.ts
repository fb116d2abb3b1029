/**
 * The fault scenarios of issue 9 at full length, against the real processes
 * (private Redis, API, dispatcher) and real receivers on loopback. Each
 * scenario's figures — sent, received, duplicated, lost; latencies; memory —
 * go into bench/results/faults.md with the machine and the date (a run of
 * some scenarios replaces only their sections).
 * Run: bun bench/faults.ts [scenario|all] [scale]
 *   scenarios: steady, api-kill, dispatcher-kill, redis, receiver, fuzz, isolation, load, load-one-endpoint,
 *   scale-out (3 API processes and 2 dispatchers on PostgreSQL, the test run's private cluster)
 *   scale: a multiplier of the default sizes (default 1; 0.1 for a quick look)
 */
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { apiKilled } from "../test/support/flow/api-killed.ts";
import { latencyText } from "../test/support/flow/delivery-check.ts";
import { dispatcherKilled } from "../test/support/flow/dispatcher-killed.ts";
import { fuzz } from "../test/support/flow/fuzz.ts";
import { isolation } from "../test/support/flow/isolation.ts";
import { load } from "../test/support/flow/load.ts";
import { receiverOutage } from "../test/support/flow/receiver-outage.ts";
import { redisOutage } from "../test/support/flow/redis-outage.ts";
import { scaleOut } from "../test/support/flow/scale-out.ts";
import type { ScenarioResult } from "../test/support/flow/scenario.ts";
import { steadyFlow } from "../test/support/flow/steady-flow.ts";
import { killTestPostgres, stopTestPostgres } from "../test/support/private-postgres.ts";
import { machine, RATE_LIMITS_OUT_OF_REACH, writeResultsFile } from "./support.ts";

type Outcome =
  | ScenarioResult
  | { name: string; setup: string; extra: Record<string, number | string>; failures: string[] };

const SCENARIOS: Record<string, (scale: number) => Promise<Outcome>> = {
  steady: (k) => steadyFlow({ mutations: Math.round(5000 * k), writers: 8 }),
  "api-kill": (k) =>
    apiKilled({ durationMs: Math.round(60_000 * k), kills: Math.max(1, Math.round(40 * k)) }),
  "dispatcher-kill": (k) =>
    dispatcherKilled({
      mutations: Math.round(1000 * k),
      kills: Math.max(1, Math.round(10 * k)),
      answerMs: 200,
      // Defaults otherwise (endpoint limit 8): a killed dispatcher's endpoint slots come back when their leases expire.
      dispatcherEnv: { DISPATCH_LOCK_MS: "2000" },
    }),
  redis: (k) =>
    redisOutage({
      durationMs: Math.round(30_000 * k),
      outageMs: Math.round(10_000 * k),
      queued: Math.round(2000 * k),
    }),
  receiver: (k) => receiverOutage({ mutations: Math.round(2000 * k), downMs: 4000 }),
  fuzz: (k) => fuzz({ requests: Math.round(20_000 * k) }),
  isolation: () => isolation(),
  // One token writes at 1,000/s, over its default rate (500/s): the limits are set out of reach.
  load: (k) =>
    load({
      rate: 1000,
      durationMs: Math.round(60_000 * k),
      warmupMs: 5000,
      writers: 32,
      apiEnv: RATE_LIMITS_OUT_OF_REACH,
    }),
  "load-one-endpoint": (k) =>
    load({
      rate: 1000,
      apiEnv: RATE_LIMITS_OUT_OF_REACH,
      durationMs: Math.round(60_000 * k),
      warmupMs: 5000,
      writers: 32,
      receiverPerHook: false,
    }),
  // Issue 29: several API processes and dispatchers on one PostgreSQL, faults in rounds.
  "scale-out": (k) =>
    scaleOut({
      apis: 3,
      dispatchers: 2,
      tenants: 12,
      durationMs: Math.round(60_000 * k),
      ratePerSecond: 150,
      answerMs: 20,
      outageMs: 2000,
      rounds: Math.max(1, Math.round(6 * k)),
    }),
};

const [which = "all", scaleText = "1"] = process.argv.slice(2);
const scale = Number(scaleText);
const names = which === "all" ? Object.keys(SCENARIOS) : which.split(",");
for (const name of names)
  if (!SCENARIOS[name]) throw new Error(`unknown scenario ${name}: ${Object.keys(SCENARIOS).join(", ")}`);

const results = join(import.meta.dir, "results/faults.md");
const sections = new Map<string, string>();
if (existsSync(results)) {
  for (const part of readFileSync(results, "utf8")
    .split(/^(?=## )/m)
    .slice(1)) {
    const key = /<!-- scenario: (\S+) -->/.exec(part)?.[1];
    if (key) sections.set(key, part.trimEnd());
  }
}

/** Latency figures mean little on a machine others are loading: wait (at most 10 min) for a quiet one. */
async function quietMachine(): Promise<void> {
  const deadline = Date.now() + 600_000;
  while ((loadavg()[0] ?? 0) > 1 && Date.now() < deadline) {
    console.log(`load average ${loadavg()[0]?.toFixed(2)}: waiting for a quieter machine`);
    await Bun.sleep(15_000);
  }
}

// The scale-out scenario's PostgreSQL is the test harness's private cluster, detached from this
// process: stopped after the last scenario, killed if the run ends otherwise.
process.on("exit", killTestPostgres);
let failed = 0;
for (const name of names) {
  if (name.startsWith("load")) await quietMachine();
  const started = Date.now();
  const load1 = loadavg()[0]?.toFixed(2);
  console.log(`== ${name} (scale ${scale})`);
  const outcome = await (SCENARIOS[name] as (scale: number) => Promise<Outcome>)(scale);
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (outcome.failures.length > 0) failed++;
  const loadEnd = loadavg()[0] ?? 0;
  // Above the core count, other work shared the machine: latencies then say more about it than about us.
  const shared =
    Math.max(Number(load1), loadEnd) > cpus().length
      ? " (one run on a machine other work shared: latencies are longer than on an idle one)"
      : "";
  const section = render(
    name,
    outcome,
    seconds,
    `${load1} at the start, ${loadEnd.toFixed(2)} at the end${shared}`,
  );
  console.log(section);
  sections.set(name, section);
}

await stopTestPostgres();

const order = Object.keys(SCENARIOS).filter((name) => sections.has(name));
writeResultsFile(
  results,
  `# Faults, end to end\n\nEach section: \`bun bench/faults.ts <scenario> [scale]\` against the real processes (private Redis with AOF, \`bun api/main.ts\`, \`bun dispatcher/main.ts\`) and receivers on loopback; \`bun bench/faults.ts all\` runs them in turn. "Lost" counts expected deliveries never received; "duplicates" are extra requests carrying an already received \`service-request-id\` (retries, allowed: at least once); "unexpected" would be a delivery nobody expected, or one change under two request ids. Latency: the element's \`timestamp\` (the commit, in the API process) to the receiver's clock on receipt, same machine; the load scenarios measure it after 5 s of warm-up at the same pace, whose own latency has a row apart. The default test suite runs each scenario small (\`test/flows/\`).\n\n${order.map((name) => sections.get(name)).join("\n\n")}\n`,
);
console.log(`\nwritten to ${results}`);
process.exit(failed > 0 ? 1 : 0);

function render(name: string, outcome: Outcome, seconds: string, load: string): string {
  const lines = [
    `## ${outcome.name}`,
    `<!-- scenario: ${name} -->`,
    "",
    `Command: \`bun bench/faults.ts ${name} ${scale}\`. Machine: ${machine()}; load average ${load}. Date: ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC. Took ${seconds} s.`,
    "",
    `Setup: ${outcome.setup}.`,
    "",
    "| figure | value |",
    "| --- | --- |",
  ];
  if ("figures" in outcome) {
    const { writes, figures } = outcome;
    const row = (label: string, value: number | string) => lines.push(`| ${label} | ${value} |`);
    row("mutations sent / acknowledged", `${writes.sent} / ${writes.acked}`);
    if (writes.lostAnswersCommitted + writes.lostAnswersNotCommitted > 0)
      row(
        "answers lost (API killed): committed / not committed (read back)",
        `${writes.lostAnswersCommitted} / ${writes.lostAnswersNotCommitted}`,
      );
    row("mutations refused", writes.rejected.length);
    row("deliveries expected", figures.expected);
    row("requests received", figures.requests);
    row("delivered (distinct)", figures.delivered);
    row("duplicates (retries of one request id)", figures.duplicates);
    row("**lost**", `**${figures.lost}**`);
    row("unexpected", figures.unexpected);
    row("bad signatures / bad timestamps", `${figures.badSignatures} / ${figures.badTimestamps}`);
    row("commit → receipt p50 / p99 / max", latencyText(figures.latency));
    row("all received, after the writes ended, within", `${(figures.receivedMs / 1000).toFixed(1)} s`);
    if (!Number.isNaN(figures.unfinished))
      row("deliveries not succeeded in the delivery log (all read back)", figures.unfinished);
  }
  for (const [label, value] of Object.entries(outcome.extra)) lines.push(`| ${label} | ${value} |`);
  lines.push(
    "",
    outcome.failures.length === 0
      ? "Result: **held**."
      : `Result: **did not hold**: ${outcome.failures.join("; ")}`,
  );
  return lines.join("\n");
}
