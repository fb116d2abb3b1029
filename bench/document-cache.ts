/**
 * Memory under unique documents (hardening: document cache growth). The real
 * API process gets `count` mutations whose text is never the same twice
 * (`aliases` inserts each), CONCURRENCY at a time; its resident memory is read
 * before, right after, and after `idleSeconds` without requests. Twice, each in
 * a fresh process: one-offs (values inline, no variables: the cache never
 * keeps them), then documents that declare a variable (the cache keeps every
 * one, so its byte budget is what holds memory). The figure to hold: after and
 * idle within 200 MB of before.
 * Run: bun bench/document-cache.ts [count] [aliases] [idleSeconds]  → bench/results/document-cache.md
 */
import { machine, residentMiB, startApiProcess, writeResultsFile } from "./support.ts";

const COUNT = Number(process.argv[2] ?? 10_000);
const ALIASES = Number(process.argv[3] ?? 1);
const IDLE_SECONDS = Number(process.argv[4] ?? 15);
const CONCURRENCY = 8;
const WARM_UP = 100;

interface Figures {
  seconds: number;
  before: number;
  after: number;
  idle: number;
}

async function measure(kept: boolean): Promise<Figures> {
  const api = await startApiProcess(0);
  try {
    const graphql = async (query: string, variables?: Record<string, unknown>) => {
      const answer = await api.call("POST", "/graphql/graphql", { query, variables });
      if (answer.body.errors) throw new Error(JSON.stringify(answer.body.errors).slice(0, 500));
      return answer.body.data as Record<string, Record<string, string>>;
    };
    const region = await graphql(
      'mutation { schema { insertRegions(input: {Name: "North", Timezone: "Europe/London"}) } }',
    );
    const regionId = region.schema?.insertRegions as string;
    // Unique by its aliases; a one-off's values are inline too, a kept one's description is a variable.
    const uniqueMutation = (n: number) => {
      const description = kept ? "$note" : `"job ${n} ${crypto.randomUUID()}"`;
      const inserts = Array.from(
        { length: ALIASES },
        (_, k) =>
          `a${n}_${k}: insertJobs(input: {Duration: ${k + 1}, RegionId: "${regionId}", Description: ${description}})`,
      );
      return `mutation${kept ? "($note: String)" : ""} { schema { ${inserts.join(" ")} } }`;
    };
    const send = async (from: number, count: number) => {
      let next = from;
      const worker = async () => {
        while (next < from + count)
          await graphql(uniqueMutation(next++), kept ? { note: "kept" } : undefined);
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    };

    await send(0, WARM_UP);
    await Bun.sleep(2000);
    const before = residentMiB(api.pid);
    const started = performance.now();
    await send(WARM_UP, COUNT);
    const seconds = (performance.now() - started) / 1000;
    const after = residentMiB(api.pid);
    let idle = after;
    for (let s = 0; s < IDLE_SECONDS; s++) {
      await Bun.sleep(1000);
      idle = residentMiB(api.pid);
    }
    return { seconds, before, after, idle };
  } finally {
    await api.stop();
  }
}

const mib = (value: number) => `${value.toFixed(0)} MiB`;
const row = (name: string, f: Figures) =>
  `| ${name} | ${f.seconds.toFixed(1)} s | ${mib(f.before)} | ${mib(f.after)} (${mib(f.after - f.before)}) | ${mib(f.idle)} (${mib(f.idle - f.before)}) |`;
const oneOffs = await measure(false);
const kept = await measure(true);
const lines = [
  "# Memory under unique mutation documents",
  "",
  `${machine()}, ${new Date().toISOString().slice(0, 10)}. ${COUNT} unique mutations of ${ALIASES} insert(s) each, ${CONCURRENCY} at a time, after ${WARM_UP} of warm-up; resident memory of the API process (over before in brackets).`,
  "",
  `| documents | sent in | before | right after | after ${IDLE_SECONDS} s idle |`,
  "| --- | --- | --- | --- | --- |",
  row("values inline, no variables (one-offs)", oneOffs),
  row("declaring a variable (kept)", kept),
  "",
];
console.log(lines.join("\n"));
writeResultsFile("bench/results/document-cache.md", lines.join("\n"));
