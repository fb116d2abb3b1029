/**
 * How precisely deferred webhooks fire, with the real processes (private Redis,
 * `bun api/main.ts` whose event worker fires them, two `bun dispatcher/main.ts`)
 * and a recording receiver on loopback: a webhook due at `CreatedDate + 5000`,
 * N Regions inserted over a few seconds, each firing's lateness (receipt −
 * due time) and exactly-once (one delivery id per record, none missing). Baseline
 * in the same run: a plain webhook's commit → receipt latency for the same
 * inserts. Scenarios: steady; a dispatcher SIGKILLed and restarted while the
 * firings are due; the API (the event worker) SIGKILLed and restarted likewise.
 * Run: bun bench/deferred.ts [records] [spreadMs] [dispatchLockMs]
 *   (default 400 over 3000 ms; the dispatchers' DISPATCH_LOCK_MS their default unless given)
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import { freePort } from "../scripts/private-redis.ts";
import { collect } from "../test/support/processes.ts";
import { type ReceivedRequest, startReceiver } from "../test/support/receiver.ts";
import { type RunningService, startService } from "../test/support/service-processes.ts";
import { machine, percentile, RATE_LIMITS_OUT_OF_REACH, writeResultsFile } from "./support.ts";

const OFFSET_MS = 5000;
const [recordsText = "400", spreadText = "3000", lockText] = process.argv.slice(2);
const RECORDS = Number(recordsText);
const SPREAD_MS = Number(spreadText);
/** Both processes must open the same webhook secrets: the bench gives them one key. */
const SECRETS_KEY = "bench-deferred-secrets-key-0123456789abcdef";
/** Both dispatchers' extra environment: the secrets key, and the lock time when given. */
const DISPATCHER_ENV = { SECRETS_KEY, ...(lockText ? { DISPATCH_LOCK_MS: lockText } : {}) };

/** A second dispatcher beside the harness's own, on the same store and Redis. */
function secondDispatcher(service: RunningService) {
  let proc: Bun.Subprocess<"ignore", "pipe", "pipe"> | null = null;
  return {
    async start() {
      proc = Bun.spawn([process.execPath, "dispatcher/main.ts"], {
        cwd: join(import.meta.dir, ".."),
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DATA_DIR: service.dataDir,
          REDIS_URL: service.redis.url,
          ...DISPATCHER_ENV,
          LOG_LEVEL: "warn",
          DELIVERY_ALLOW_HTTP: "true",
          DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8,::1",
          DISPATCHER_PORT: String(freePort()),
        },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const out = collect(proc.stdout);
      collect(proc.stderr);
      const deadline = Date.now() + 20_000;
      while (!out.text().includes("Dispatcher consuming deliveries")) {
        if (Date.now() > deadline || proc.exitCode !== null) throw new Error("second dispatcher not ready");
        await Bun.sleep(10);
      }
    },
    async kill() {
      proc?.kill("SIGKILL");
      await proc?.exited;
      proc = null;
    },
  };
}

interface Figures {
  scenario: string;
  fired: number;
  missing: number;
  firedTwice: number;
  redelivered: number;
  lateness: number[];
  baseline: number[];
  baselineMissing: number;
  disruption: string;
  /** Due time → the event worker's delivery row, ms. */
  eventStage: number[];
  /** The delivery row → receipt (queue, dispatcher, HTTP), ms. */
  dispatchStage: number[];
}

async function run(
  service: RunningService,
  receiverUrl: string,
  requests: ReceivedRequest[],
  scenario: string,
  disrupt: ((firstDueAt: number) => Promise<string>) | null,
): Promise<Figures> {
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${service.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${service.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const tag = scenario.replace(/\W+/g, "-");
  const hooks: string[] = [];
  for (const hook of [
    {
      name: `deferred-${tag}`,
      url: `${receiverUrl}/deferred-${tag}`,
      type: "graphql_deferred",
      field: "CreatedDate",
      offset: OFFSET_MS,
      query: `subscription { regions(filter: "Description == '${tag}'") { UID CreatedDate } }`,
    },
    {
      name: `plain-${tag}`,
      url: `${receiverUrl}/plain-${tag}`,
      type: "graphql",
      query: `subscription { schemaRegions(filter: "Description == '${tag}'") { timestamp data { UID } } }`,
    },
  ]) {
    const created = await call("POST", "/webhooks", hook);
    if (created.status !== 201) throw new Error(`webhook not created: ${JSON.stringify(created.body)}`);
    hooks.push((created.body.result as { id: string }).id);
  }
  const uids = new Set<string>();
  const startedAt = Date.now();
  // Eight writers, each at its share of the pace: N inserts spread over SPREAD_MS.
  const writers = 8;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = w; i < RECORDS; i += writers) {
        const wait = startedAt + (i * SPREAD_MS) / RECORDS - Date.now();
        if (wait > 0) await Bun.sleep(wait);
        const answer = await call("POST", "/graphql/graphql", {
          query: `mutation { schema { insertRegions(input: {Name: "r${i}", Timezone: "UTC", Description: "${tag}"}) } }`,
        });
        const uid = (answer.body.data as { schema?: { insertRegions?: string } } | undefined)?.schema
          ?.insertRegions;
        if (!uid) throw new Error(`insert failed: ${JSON.stringify(answer.body)}`);
        uids.add(uid);
      }
    }),
  );
  const disruption = disrupt ? await disrupt(startedAt + OFFSET_MS) : "none";
  const deferredPath = `/deferred-${tag}`;
  const plainPath = `/plain-${tag}`;
  const firedUids = () => new Set(requests.filter((r) => r.path === deferredPath).map((r) => uidOf(r)));
  // Drain: until every record fired, or 40 s past the last due time (a stalled job's lock is 30 s).
  const deadline = Date.now() + OFFSET_MS + 40_000;
  while (Date.now() < deadline && firedUids().size < uids.size) await Bun.sleep(100);
  await Bun.sleep(1000);
  const deferred = requests.filter((r) => r.path === deferredPath);
  const byUid = Map.groupBy(deferred, uidOf);
  const lateness: number[] = [];
  let firedTwice = 0;
  for (const [, received] of byUid) {
    const first = received.reduce((a, b) => (a.receivedAt <= b.receivedAt ? a : b));
    const [element] = JSON.parse(first.body) as { data: { regions: { CreatedDate: string } } }[];
    lateness.push(first.receivedAt - (Date.parse(element?.data.regions.CreatedDate ?? "") + OFFSET_MS));
    if (new Set(received.map((r) => r.headers["service-request-id"])).size > 1) firedTwice++;
  }
  const plain = requests.filter((r) => r.path === plainPath);
  const plainEvent = (r: ReceivedRequest) =>
    JSON.parse(r.body)[0]?.data?.schemaRegions as { timestamp: string; data: { UID: string } };
  const plainByUid = Map.groupBy(plain, (r) => plainEvent(r).data.UID);
  const baseline = [...plainByUid.values()].map((received) => {
    const first = received.reduce((a, b) => (a.receivedAt <= b.receivedAt ? a : b));
    return first.receivedAt - Date.parse(plainEvent(first).timestamp);
  });
  // Where the time went: the delivery row is made when the event worker fires (createdAt).
  const firedAt = new Map<string, number>();
  for (let cursor: string | null = ""; cursor !== null; ) {
    const page = await call(
      "GET",
      `/webhooks/${hooks[0]}/deliveries?limit=200${cursor ? `&cursor=${cursor}` : ""}`,
    );
    for (const row of page.body.result as { id: string; createdAt: string }[])
      firedAt.set(row.id, Date.parse(row.createdAt));
    cursor = page.body.nextCursor as string | null;
  }
  const eventStage: number[] = [];
  const dispatchStage: number[] = [];
  for (const [, received] of byUid) {
    const first = received.reduce((a, b) => (a.receivedAt <= b.receivedAt ? a : b));
    const fired = firedAt.get(first.headers["service-request-id"] ?? "");
    if (fired === undefined) continue;
    const [element] = JSON.parse(first.body) as { data: { regions: { CreatedDate: string } } }[];
    eventStage.push(fired - (Date.parse(element?.data.regions.CreatedDate ?? "") + OFFSET_MS));
    dispatchStage.push(first.receivedAt - fired);
  }
  for (const id of hooks) await call("DELETE", `/webhooks/${id}`);
  return {
    scenario,
    fired: byUid.size,
    missing: [...uids].filter((uid) => !byUid.has(uid)).length,
    firedTwice,
    redelivered: deferred.length - byUid.size,
    lateness,
    baseline,
    baselineMissing: [...uids].filter((uid) => !plainByUid.has(uid)).length,
    disruption,
    eventStage,
    dispatchStage,
  };
}

const uidOf = (request: ReceivedRequest): string =>
  (JSON.parse(request.body)[0]?.data?.regions?.UID as string | undefined) ?? "";

/** Sleeps until `at` (ms since the epoch). */
const until = (at: number) => Bun.sleep(Math.max(0, at - Date.now()));

const receiver = startReceiver();
const service = await startService({
  apiEnv: { SECRETS_KEY, ...RATE_LIMITS_OUT_OF_REACH },
  dispatcherEnv: DISPATCHER_ENV,
});
const second = secondDispatcher(service);
const figures: Figures[] = [];
try {
  await second.start();
  figures.push(await run(service, receiver.url, receiver.requests, "2 dispatchers", null));
  figures.push(
    await run(service, receiver.url, receiver.requests, "dispatcher SIGKILL", async (firstDueAt) => {
      // A second into the firings: the killed dispatcher holds deliveries mid-flight.
      await until(firstDueAt + 1000);
      const at = Date.now();
      await service.dispatcher.kill();
      await service.dispatcher.start();
      return `dispatcher 1 SIGKILLed at due+1 s, back after ${Date.now() - at} ms`;
    }),
  );
  figures.push(
    await run(service, receiver.url, receiver.requests, "API SIGKILL", async (firstDueAt) => {
      await until(firstDueAt + 1000);
      const at = Date.now();
      await service.api.kill();
      await service.api.start();
      return `API (event worker) SIGKILLed at due+1 s, back after ${Date.now() - at} ms`;
    }),
  );
} finally {
  await second.kill();
  await service.stop();
  await receiver.stop();
}

const load = loadavg()
  .map((l) => l.toFixed(2))
  .join(", ");
const stat = (samples: number[], p: number) =>
  samples.length === 0 ? "–" : `${Math.round(percentile(samples, p))}`;
const rows = figures.map(
  (f) =>
    `| ${f.scenario} | ${f.fired} / ${RECORDS} | ${f.missing} | ${f.firedTwice} | ${f.redelivered} | ${stat(f.lateness, 50)} | ${stat(f.lateness, 99)} | ${stat(f.lateness, 100)} | ${stat(f.baseline, 50)} | ${stat(f.baseline, 99)} | ${stat(f.baseline, 100)} | ${(percentile(f.lateness, 99) / percentile(f.baseline, 99)).toFixed(1)} | ${f.lateness.filter((l) => l > 1000).length} | ${stat(f.eventStage, 99)} / ${stat(f.eventStage, 100)} | ${stat(f.dispatchStage, 99)} / ${stat(f.dispatchStage, 100)} | ${f.disruption} |`,
);
const text = `# Deferred webhooks: firing precision

\`bun bench/deferred.ts ${RECORDS} ${SPREAD_MS}${lockText ? ` ${lockText}` : ""}\` — ${new Date().toISOString()} — ${machine()} — load average at the end: ${load} (other jobs share the machine).

Real processes: private Redis, \`bun api/main.ts\` (feed, deferred consumer, event worker), two \`bun dispatcher/main.ts\` (DISPATCH_LOCK_MS ${lockText ?? "default, 30000"}), a recording receiver on loopback. Per scenario a fresh \`graphql_deferred\` webhook on \`CreatedDate + ${OFFSET_MS}\` ms and a plain \`graphql\` webhook (the baseline), both filtered to the scenario's records; ${RECORDS} Regions inserted by 8 writers over ${SPREAD_MS} ms. Lateness: receipt − (CreatedDate + ${OFFSET_MS}) of each record's first request, ms. Baseline: the plain webhook's commit (\`timestamp\`) → receipt, ms. "Fired twice": records with more than one delivery id (must be 0); "redelivered": extra requests with an id already received (at least once, allowed). "Due → fired": the due time to the event worker logging the delivery (its \`createdAt\`); "fired → received": from there through the delivery queue and a dispatcher to the receiver. Target: lateness p99 ≤ 1000 ms.

| scenario | fired | missing | fired twice | redelivered | late p50 | late p99 | late max | baseline p50 | baseline p99 | baseline max | p99 ÷ baseline p99 | > 1 s | due → fired p99 / max | fired → received p99 / max | disruption |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

Where lateness comes from (the stage columns tell which): due → fired is BullMQ's delayed job reaching the API's event worker (it blocks until the next delayed job's time, no polling) plus the firing's read and its delivery row — tens of ms steady. With the API SIGKILLed, firings due while it is down fire when it is back (the restart time); a firing the dead process held is taken again once its lock lapses (the event worker's 5 s lock, stalled jobs looked for every 2 s; BullMQ's defaults were 30 s and 30 s). Fired → received is the delivery path every webhook shares, as the baseline shows: a burst that finds the endpoint's slots taken (DELIVERY_ENDPOINT_CONCURRENCY, 8 across dispatchers; all of the bench's webhooks share one receiver) parks a job about a second, and a delivery held by a SIGKILLed dispatcher waits for DISPATCH_LOCK_MS (30 s by default) before another dispatcher takes it — a max, not a p99, and a redelivery of the same id when the dead one had sent it.
`;
const results = join(import.meta.dir, "results/deferred.md");
writeResultsFile(results, text);
console.log(text);
