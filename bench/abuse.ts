/**
 * The heavy attacks of the hardening issue, replayed against the real API process: while one tenant
 * attacks (from a process of its own), another tenant's plain query runs back to back, and its latency
 * during each attack is set against its latency with no attack (same run). Then API memory across
 * 10,000 unique mutations, and after the process has been idle. Figures go into bench/results/abuse.md
 * with the machine and date.
 * Run: bun bench/abuse.ts [seconds per phase]   (default 5)
 * (`bun bench/abuse.ts --attack <name> <base> <token> <seconds>` is the attacker's process.)
 */
import { connect } from "node:net";
import { loadavg } from "node:os";
import { join } from "node:path";
import { pinProcess } from "./compare/memory.ts";
import {
  machine,
  percentile,
  RATE_LIMITS_OUT_OF_REACH,
  residentMiB,
  startApiProcess,
  writeResultsFile,
} from "./support.ts";

const seconds = Number(process.argv[2] ?? 5);
const ATTACK_WORKERS = 4;

/** A request of the attack: a GraphQL body, or a raw fetch for attacks at the HTTP edge. */
interface Attack {
  name: string;
  what: string;
  /** Each call sends one attack request and returns its answer's status and first error code. */
  send(base: string, token: string): Promise<string>;
}

const graphql = async (base: string, token: string, query: string): Promise<string> => {
  const response = await fetch(`${base}/graphql/graphql`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(60_000),
  });
  const body = (await response.json().catch(() => ({}))) as {
    errors?: { extensions?: { code?: string } }[];
    errorType?: string;
  };
  return `${response.status} ${body.errors?.[0]?.extensions?.code ?? body.errorType ?? "ok"}`;
};

/** 24 fragments, each spreading the next twice: 2^24 fields once expanded, ~1 KB of text. */
function fragmentBomb(): string {
  const parts = ["query { regions { edges { node { ...F0 } } } }"];
  for (let i = 0; i < 24; i++) parts.push(`fragment F${i} on Regions { ...F${i + 1} ...F${i + 1} }`);
  parts.push("fragment F24 on Regions { UID }");
  return parts.join("\n");
}

function deepIntrospection(): string {
  let type = "name";
  for (let i = 0; i < 8; i++) type = `name ofType { ${type} }`;
  const aliases = Array.from(
    { length: 50 },
    (_, i) =>
      `s${i}: __schema { types { name fields { name args { name type { ${type} } } type { ${type} } } } }`,
  );
  return `{ ${aliases.join(" ")} }`;
}

const ATTACKS: Attack[] = [
  {
    name: "fragment bomb",
    what: "24 fragments each spreading the next twice (~1 KB)",
    send: (base, token) => graphql(base, token, fragmentBomb()),
  },
  {
    name: "deep introspection",
    what: "50 aliased `__schema { types { fields { args { type … } } } }`, 9 levels of ofType",
    send: (base, token) => graphql(base, token, deepIntrospection()),
  },
  {
    name: "deep offsets",
    what: "100 aliased lists, each `offset: 1000000, first: 200`",
    send: (base, token) =>
      graphql(
        base,
        token,
        `{ ${Array.from({ length: 100 }, (_, i) => `a${i}: regions(offset: 1000000, first: 200) { edges { node { UID Name } } }`).join(" ")} }`,
      ),
  },
  {
    name: "totalCounts",
    what: "100 aliased `totalCount`s with a filter",
    send: (base, token) =>
      graphql(
        base,
        token,
        `{ ${Array.from({ length: 100 }, (_, i) => `c${i}: regions(filter: "Name LIKE '%${i}%'", first: 1) { totalCount }`).join(" ")} }`,
      ),
  },
  {
    name: "request burst",
    what: `${ATTACK_WORKERS} connections sending \`{ regions(first: 1) { totalCount } }\` back to back`,
    send: (base, token) => graphql(base, token, "{ regions(first: 1) { totalCount } }"),
  },
  {
    name: "oversized body",
    what: "a raw request declaring a 64 MiB body with `Expect: 100-continue`, closed after the answer",
    send: (base, token) => declareHugeBody(base, token),
  },
];

/** Declares a 64 MiB body on a raw socket, sends none of it, and reads the answer's status line. */
function declareHugeBody(base: string, token: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST /graphql/graphql HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${64 * 2 ** 20}\r\nExpect: 100-continue\r\n\r\n`,
      );
    });
    let received = "";
    const done = (answer: string) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(10_000, () => done("timeout"));
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      const finals = [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
      const final = finals.find((status) => status !== "100");
      if (final) done(finals.includes("100") ? `100 then ${final}` : final);
    });
    socket.on("error", (error) => done(String(error).slice(0, 40)));
  });
}

/** Sends the victim's plain query back to back until `until`; returns each answer's latency in ms. */
async function probe(base: string, token: string, until: number): Promise<number[]> {
  const latencies: number[] = [];
  while (performance.now() < until) {
    const started = performance.now();
    const answer = await graphql(base, token, "{ regions(first: 5) { edges { node { UID Name } } } }");
    if (!answer.startsWith("200 ok")) throw new Error(`the victim's query failed: ${answer}`);
    latencies.push(performance.now() - started);
    await Bun.sleep(2);
  }
  return latencies;
}

/** Runs `attack` from ATTACK_WORKERS loops until `until`; returns how its requests were answered. */
async function attackUntil(attack: Attack, base: string, token: string, until: number) {
  const answers = new Map<string, number>();
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: ATTACK_WORKERS }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const answer = await attack.send(base, token).catch((error: unknown) => String(error).slice(0, 60));
        times.push(performance.now() - started);
        answers.set(answer, (answers.get(answer) ?? 0) + 1);
      }
    }),
  );
  return { answers, times };
}

async function mintTenant(dataDir: string, name: string): Promise<string> {
  const proc = Bun.spawn([process.execPath, "api/admin/cli.ts", "create-tenant", name], {
    env: { ...process.env, DATA_DIR: dataDir },
    stdout: "pipe",
  });
  const lines = (await new Response(proc.stdout).text()).trim().split("\n");
  if ((await proc.exited) !== 0) throw new Error(`admin create-tenant failed: ${lines.join(" ")}`);
  return lines.at(-1) ?? "";
}

async function uniqueMutations(base: string, token: string, count: number, workers = 8) {
  let next = 0;
  let failed = 0;
  const insert = (n: number) =>
    graphql(
      base,
      token,
      `mutation { schema { insertRegions(input: {Name: "region ${n} ${crypto.randomUUID()}", Timezone: "UTC"}) } }`,
    );
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < count) {
        const n = next++;
        let answer = await insert(n);
        // The attacker's token is rate limited like any: wait for its budget and send another.
        while (answer.startsWith("429")) {
          await Bun.sleep(50);
          answer = await insert(n);
        }
        if (!answer.startsWith("200 ok")) failed++;
      }
    }),
  );
  return failed;
}

const fmt = (value: number) => value.toFixed(1);

/** The attacker's process: runs one attack for `seconds`, prints how it was answered as JSON. */
async function runAttacker([name, base, token, seconds]: string[]) {
  const attack = ATTACKS.find((candidate) => candidate.name === name);
  if (!attack || !base || !token) throw new Error(`unknown attack ${name}`);
  const { answers, times } = await attackUntil(
    attack,
    base,
    token,
    performance.now() + Number(seconds) * 1000,
  );
  console.log(JSON.stringify({ answers: [...answers], p50: percentile(times, 50) }));
}

/** Starts the attacker's process pinned to `core`; resolves with its answers once it is done. */
async function spawnAttacker(attack: Attack, base: string, token: string, core: number) {
  const proc = Bun.spawn(
    [
      "taskset",
      "-c",
      String(core),
      process.execPath,
      import.meta.path,
      "--attack",
      attack.name,
      base,
      token,
      String(seconds),
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const output = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`the attacker failed: ${output}`);
  return JSON.parse(output) as { answers: [string, number][]; p50: number };
}

async function main() {
  // Every limit at its default: the rate limits are part of the defence (empty counts as unset).
  const defaults = Object.fromEntries(Object.keys(RATE_LIMITS_OUT_OF_REACH).map((key) => [key, ""]));
  const loadAtStart = loadavg()
    .map((value) => value.toFixed(1))
    .join(", ");
  const api = await startApiProcess(0, defaults);
  pinProcess(process.pid, 1);
  try {
    const attackerToken = await mintTenant(api.dataDir, "attacker");
    const atStart = residentMiB(api.pid);
    const rows: string[] = [];

    const baseline = await probe(api.base, api.token, performance.now() + seconds * 1000);
    const baseP99 = percentile(baseline, 99);
    rows.push(
      `| none (baseline) | – | – | ${fmt(percentile(baseline, 50))} | ${fmt(baseP99)} | ${fmt(Math.max(...baseline))} | – |`,
    );
    for (const attack of ATTACKS) {
      const until = performance.now() + seconds * 1000;
      const [victim, attacked] = await Promise.all([
        probe(api.base, api.token, until),
        spawnAttacker(attack, api.base, attackerToken, 1),
      ]);
      const answered = attacked.answers.map(([answer, n]) => `${n} × ${answer}`).join(", ");
      const added = percentile(victim, 99) - baseP99;
      rows.push(
        `| ${attack.name}: ${attack.what} | ${answered} | ${fmt(attacked.p50)} | ${fmt(percentile(victim, 50))} | ${fmt(percentile(victim, 99))} | ${fmt(Math.max(...victim))} | ${fmt(added)} |`,
      );
      console.log(rows.at(-1));
    }

    const beforeMutations = residentMiB(api.pid);
    const failed = await uniqueMutations(api.base, attackerToken, 10_000);
    const afterMutations = residentMiB(api.pid);
    await Bun.sleep(15_000);
    const afterIdle = residentMiB(api.pid);

    const report = `# Abuse: what the heavy attacks cost other tenants

Machine: ${machine()}. Date: ${new Date().toISOString().slice(0, 10)}. Command: \`bun bench/abuse.ts ${seconds}\`.
Setup: the API process (defaults: SQLite, every limit at its default) pinned to core 0; the attacker
(tenant \`attacker\`, its own process, ${ATTACK_WORKERS} connections) and the victim (tenant \`default\`,
one plain query \`{ regions(first: 5) { … } }\` back to back) pinned to core 1; ${seconds} s per phase;
loopback. Attack answers are HTTP status and error code (\`429\`: the rate limit answered first).
Machine load average at the start: ${loadAtStart} (other work on the machine shows in the victim's figures).

| attack | attack answers | attack p50 ms | victim p50 ms | victim p99 ms | victim max ms | added victim p99 ms |
| --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

Target: each attack adds < 50 ms to the victim's p99.

Memory (resident, MiB): at start ${fmt(atStart)}; before the mutations ${fmt(beforeMutations)}; after 10,000
unique one-off mutations ${fmt(afterMutations)} (${fmt(afterMutations - atStart)} above start; ${failed} not answered 200);
after 15 s idle ${fmt(afterIdle)} (${fmt(afterIdle - atStart)} above start). Target: within 200 MB of the start, and
back down when idle.
`;
    const results = join(import.meta.dir, "results/abuse.md");
    writeResultsFile(results, report);
    console.log(report);
  } finally {
    await api.stop();
  }
}

if (process.argv[2] === "--attack") await runAttacker(process.argv.slice(3));
else await main();
