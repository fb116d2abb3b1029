/**
 * What one API process changes, seen by another: two real API processes (A and B) on one store
 * and one Redis. Field visible on B: a custom field added through A's REST, then B queried for it
 * until it answers without errors — the time from A's answer to B's first full answer, and how
 * many of B's answers still lacked the field. Revocation refused on B: a token used on B (so B
 * has its lookup cached), revoked through A, then B asked with it until it refuses — the time
 * from A's answer to B's refusal, and how many of B's answers still accepted it; and how long the
 * revocation itself takes on A (it returns once every process has dropped the token). Baseline in
 * the same run: B answering a query of a field it knows, right after A answered something.
 * Run: bun bench/propagation.ts [trials=50] [--engine postgres] → bench/results/propagation.md
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, startPrivateRedis } from "../scripts/private-redis.ts";
import { type BenchEngine, ENGINE_LABEL, parseBenchArgs } from "./bench-engine.ts";
import { startPrivatePostgres } from "./compare/postgres.ts";
import { machine, percentile, RATE_LIMITS_OUT_OF_REACH, writeResultsFile } from "./support.ts";

const RESULTS = join(import.meta.dir, "results/propagation.md");

/** An API process on `env`'s store, once it says it listens; its first start's admin token. */
async function startApi(env: Record<string, string | undefined>) {
  const port = freePort();
  const proc = Bun.spawn([process.execPath, "api/main.ts"], {
    env: { ...env, PORT: String(port) },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let output = "";
  while (!output.includes("API listening")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the API exited: ${output}`);
    output += new TextDecoder().decode(value);
  }
  const token = /tenant 'default'.*\n(\S+)/.exec(output)?.[1] ?? "";
  return {
    base: `http://127.0.0.1:${port}`,
    token,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the bench reads arbitrary JSON answers
  body: any;
}

async function call(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

interface Measure {
  label: string;
  samples: number[];
  /** B's answers that still showed the old state, over all trials. */
  stale: number;
}

async function measure(trials: number, a: { base: string }, b: { base: string }, token: string) {
  const gql = (base: string, query: string) => call(base, token, "POST", "/graphql/graphql", { query });
  const baseline: Measure = { label: "B answers a field it knows (baseline)", samples: [], stale: 0 };
  const field: Measure = { label: "field added on A, visible on B", samples: [], stale: 0 };
  const revoked: Measure = { label: "token revoked on A, refused on B", samples: [], stale: 0 };
  const revoking: Measure = {
    label: "the revocation on A (waits for every process to drop the token)",
    samples: [],
    stale: 0,
  };
  const run = Date.now().toString(36);
  for (let i = 0; i < trials; i++) {
    await call(a.base, token, "GET", "/auth/whoami");
    let at = performance.now();
    await gql(b.base, "{ regions(first: 1) { edges { node { Name } } } }");
    baseline.samples.push(performance.now() - at);

    const name = `P${run}_${i}`;
    const added = await call(a.base, token, "POST", "/custom/standalone/fields", {
      schemaName: "Regions",
      name,
      column: { type: "int" },
    });
    if (added.status !== 200) throw new Error(`field not added: ${JSON.stringify(added.body)}`);
    at = performance.now();
    while ((await gql(b.base, `{ regions(first: 1) { edges { node { ${name} } } } }`)).body.errors)
      field.stale++;
    field.samples.push(performance.now() - at);

    const minted = await call(a.base, token, "POST", "/auth/token", { description: `bench ${i}` });
    const own = minted.body.result as { token: string; jti: string };
    if ((await call(b.base, own.token, "GET", "/auth/whoami")).status !== 200)
      throw new Error("token refused");
    at = performance.now();
    await call(a.base, token, "DELETE", `/auth/token/${own.jti}`);
    revoking.samples.push(performance.now() - at);
    at = performance.now();
    while ((await call(b.base, own.token, "GET", "/auth/whoami")).status === 200) revoked.stale++;
    revoked.samples.push(performance.now() - at);
  }
  return [field, revoked, revoking, baseline];
}

const row = (m: Measure) =>
  `| ${m.label} | ${m.samples.length} | ${percentile(m.samples, 50).toFixed(1)} ms | ${percentile(m.samples, 99).toFixed(1)} ms | ${Math.max(...m.samples).toFixed(1)} ms | ${m.stale} |`;

async function main(): Promise<void> {
  const { engine, positional } = parseBenchArgs(process.argv.slice(2));
  const trials = Number(positional[0] ?? 50);
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  const dataDir = mkdtempSync(join(tmpdir(), "tds-bench-propagation-"));
  const stops: (() => Promise<void>)[] = [async () => rmSync(dataDir, { recursive: true, force: true })];
  try {
    const redis = await startPrivateRedis(join(dataDir, "redis"));
    stops.unshift(() => redis.stop());
    // A folder of its own: the server runs as the postgres user, who cannot enter dataDir.
    const postgres =
      engine === "postgres"
        ? await startPrivatePostgres(mkdtempSync(join(tmpdir(), "tds-bench-postgres-")), 0)
        : null;
    if (postgres) {
      stops.unshift(() => postgres.stop());
      await postgres.createDatabase("bench");
    }
    const env = {
      ...process.env,
      DATA_DIR: dataDir,
      REDIS_URL: redis.url,
      LOG_LEVEL: "error",
      // Given, not generated: two processes starting at once must not race to create them.
      JWT_SECRET: "bench-jwt-secret-bench-jwt-secret-0123456789",
      SECRETS_KEY: "bench-secrets-key-bench-secrets-key-0123456789",
      ...(postgres ? { DATABASE_URL: postgres.url("bench") } : {}),
      ...RATE_LIMITS_OUT_OF_REACH,
    };
    const a = await startApi(env);
    stops.unshift(() => a.stop());
    const b = await startApi(env);
    stops.unshift(() => b.stop());
    const lines = (await measure(trials, a, b, a.token)).map(row);
    console.log(lines.join("\n"));
    writeResults(engine, trials, load, lines);
  } finally {
    for (const stop of stops) await stop();
  }
}

/** Rewrites this engine's section of the results file, keeping the other engine's. */
function writeResults(engine: BenchEngine, trials: number, load: string, lines: string[]): void {
  const heading = `## ${ENGINE_LABEL[engine]}`;
  const section = [
    heading,
    "",
    `Machine: ${machine()}. Date: ${new Date().toISOString().slice(0, 10)}. Load average before the run: ${load}. \`bun bench/propagation.ts ${trials}${engine === "postgres" ? " --engine postgres" : ""}\`.`,
    "",
    "| measure | trials | p50 | p99 | max | stale answers on B |",
    "| --- | --- | --- | --- | --- | --- |",
    ...lines,
    "",
  ].join("\n");
  const intro = `# Changes made through one API process, seen by another

\`bun bench/propagation.ts [trials] [--engine postgres]\`: two API processes (A and B) on one store and one Redis.
Field visible on B: a custom field added through A's REST, then B queried for it until it answers without errors;
the time from A's answer to B's first full answer. Revocation refused on B: a token B has just accepted (its
lookup cached there), revoked through A, then B asked with it until it refuses; the time from A's answer to B's
refusal; and the revocation's own time on A, which returns once every process has dropped the token. Stale
answers: B's answers, over all trials, that still lacked the field or still accepted the token (0 means B's very
next request saw the change every time). Baseline: B answering a query of a field it knows.
Target: p99 under 100 ms, 0 stale.
`;
  let text = intro;
  try {
    text = readFileSync(RESULTS, "utf8");
  } catch {
    // first run: the file starts with the introduction
  }
  const start = text.indexOf(heading);
  if (start < 0) text = `${text.trimEnd()}\n\n${section}`;
  else {
    const next = text.indexOf("\n## ", start + heading.length);
    text = `${text.slice(0, start)}${section}${next < 0 ? "" : `\n${text.slice(next + 1)}`}`;
  }
  writeResultsFile(RESULTS, `${text.trimEnd()}\n`);
}

await main();
