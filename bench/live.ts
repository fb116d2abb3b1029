/**
 * Live subscriptions at scale. N WebSocket clients (graphql-transport-ws, in two client processes)
 * over two real API processes on one store and one Redis, each subscribed to its own Region
 * (`filter: "UID == '…'"`, UPDATE only), while mutations sent to API A (the feed's lease holder)
 * rename those records at a set rate for a set time: commit → client latency (the event's
 * `timestamp` to its receipt), messages lost while connected (updates committed − events
 * received), API memory per idle connection (RSS growth of both processes once every client is
 * subscribed, ÷ N). Baseline in the same run: the same clients against a bare Bun WebSocket
 * server that routes each published update to its record's socket.
 * Run: bun bench/live.ts [subscribers=1000[,10000]] [rates=100,500] [seconds=10] → bench/results/live.md
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, startPrivateRedis } from "../scripts/private-redis.ts";
import { machine, percentile, RATE_LIMITS_OUT_OF_REACH, residentMiB, writeResultsFile } from "./support.ts";

const SELF = import.meta.path;
const CLIENT_PROCESSES = 2;
const subscriptionOf = (uid: string) =>
  `subscription { schemaRegions(operation: UPDATE, filter: "UID == '${uid}'") { timestamp data { Name } } }`;

/** Client mode: argv = client <file of json {urls, token, uids}>; stdin lines `count` / `report`. */
async function runClients(spec: { urls: string[]; token: string; uids: string[] }): Promise<void> {
  const latencies: number[] = [];
  let received = 0;
  let closed = 0;
  let subscribed = 0;
  const open = (uid: string, url: string) =>
    new Promise<void>((resolve) => {
      const socket = new WebSocket(url, "graphql-transport-ws");
      socket.onopen = () =>
        socket.send(
          JSON.stringify({ type: "connection_init", payload: { Authorization: `Bearer ${spec.token}` } }),
        );
      socket.onclose = () => {
        closed++;
        resolve();
      };
      socket.onmessage = (event) => {
        const message = JSON.parse(String(event.data));
        if (message.type === "next") {
          received++;
          latencies.push(Date.now() - Date.parse(message.payload.data.schemaRegions.timestamp));
        } else if (message.type === "connection_ack") {
          socket.send(
            JSON.stringify({ type: "subscribe", id: "1", payload: { query: subscriptionOf(uid) } }),
          );
          subscribed++;
          resolve();
        } else if (message.type === "ping") socket.send('{"type":"pong"}');
      };
    });
  // Opened 200 at a time: a burst of thousands of handshakes is not what is measured.
  for (let i = 0; i < spec.uids.length; i += 200)
    await Promise.all(
      spec.uids.slice(i, i + 200).map((uid, k) => open(uid, spec.urls[(i + k) % spec.urls.length] as string)),
    );
  console.log(`ready ${subscribed}`);
  for await (const line of console) {
    if (line === "count") console.log(`count ${received}`);
    else if (line === "report") {
      console.log(`report ${JSON.stringify({ received, closed, latencies })}`);
      process.exit(0);
    }
  }
}

/** Bare mode: argv = bare <port>; POST /publish {uid, name} → `next` to the socket subscribed to uid. */
function runBare(port: number): void {
  const byUid = new Map<string, Bun.ServerWebSocket<unknown>>();
  Bun.serve({
    hostname: "127.0.0.1",
    port,
    async fetch(request, server) {
      const path = new URL(request.url).pathname;
      if (path === "/count") return new Response(String(byUid.size));
      if (path === "/publish") {
        const { uid, name } = (await request.json()) as { uid: string; name: string };
        const event = {
          data: { schemaRegions: { timestamp: new Date().toISOString(), data: { Name: name } } },
        };
        byUid.get(uid)?.send(JSON.stringify({ type: "next", id: "1", payload: event }));
        return new Response("ok");
      }
      return server.upgrade(request, { headers: { "sec-websocket-protocol": "graphql-transport-ws" } })
        ? undefined
        : new Response("no", { status: 400 });
    },
    websocket: {
      message(socket, text) {
        const message = JSON.parse(String(text));
        if (message.type === "connection_init") socket.send('{"type":"connection_ack"}');
        else if (message.type === "subscribe")
          byUid.set(/UID == '([^']+)'/.exec(message.payload.query)?.[1] ?? "", socket);
      },
    },
  });
  console.log("ready");
}

/** A child process speaking lines on stdin/stdout. */
function lineProcess(args: string[], env: Record<string, string | undefined> = process.env) {
  const proc = Bun.spawn(args, { env, stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  let buffer = "";
  const nextLine = async (prefix: string): Promise<string> => {
    for (;;) {
      const end = buffer.indexOf("\n");
      if (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (line.startsWith(prefix)) return line.slice(prefix.length).trim();
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error(`${args.join(" ")} exited:\n${buffer}`);
      buffer += new TextDecoder().decode(value);
    }
  };
  const ask = (line: string, prefix: string) => {
    proc.stdin.write(`${line}\n`);
    proc.stdin.flush();
    return nextLine(prefix);
  };
  return { proc, nextLine, ask };
}

interface Target {
  /** WebSocket URLs the clients spread over. */
  urls: string[];
  token: string;
  pids: number[];
  /** Subscriptions held (all processes). */
  held(): Promise<number>;
  /** Renames record `uid` to `name` (a committed mutation, or a bare publish). */
  update(uid: string, name: string): Promise<boolean>;
  uids: string[];
  stop(): Promise<void>;
}

async function startService(n: number): Promise<Target> {
  const dataDir = mkdtempSync(join(tmpdir(), "tds-bench-live-"));
  const redis = await startPrivateRedis(join(dataDir, "redis"));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    REDIS_URL: redis.url,
    LOG_LEVEL: "error",
    SECRETS_KEY: "bench-secrets-key-bench-secrets-key-0123456789",
    JWT_SECRET: "bench-jwt-secret-bench-jwt-secret-0123456789",
    LIVE_MAX_CONNECTIONS_PER_TOKEN: String(n + 10),
    ...RATE_LIMITS_OUT_OF_REACH,
  };
  const ports = [freePort(), freePort()];
  const apis = ports.map(() => null as ReturnType<typeof lineProcess> | null);
  let token = "";
  // A first (it provisions the tenant, prints the token and takes the feed lease), then B.
  for (const [i, port] of ports.entries()) {
    const api = lineProcess([process.execPath, "api/main.ts"], { ...env, PORT: String(port) });
    apis[i] = api;
    if (i === 0) {
      await api.nextLine("Administrator token");
      token = await api.nextLine("");
    }
    await api.nextLine("API listening");
    await Bun.sleep(500);
  }
  const [a] = ports.map((port) => `http://127.0.0.1:${port}`);
  const graphql = async (query: string) => {
    const response = await fetch(`${a}/graphql/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as { data?: { schema: Record<string, string> }; errors?: unknown };
  };
  const uids: string[] = [];
  for (let i = 0; i < n; i += 100) {
    const inserts = Array.from(
      { length: Math.min(100, n - i) },
      (_, k) => `r${k}: insertRegions(input: {Name: "r${i + k}", Timezone: "UTC"})`,
    );
    const answer = await graphql(`mutation { schema { ${inserts.join(" ")} } }`);
    uids.push(...Object.values(answer.data?.schema ?? {}));
  }
  // The inserts' events go out before anyone subscribes (UPDATE only, besides).
  await Bun.sleep(1000);
  const gauge = async (port: number) => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return Number(/^live_subscriptions (\d+)$/m.exec(text)?.[1] ?? 0);
  };
  return {
    urls: ports.map((port) => `ws://127.0.0.1:${port}/graphql/subscriptions`),
    token,
    pids: apis.map((api) => api?.proc.pid ?? 0),
    uids,
    held: async () => (await Promise.all(ports.map(gauge))).reduce((x, y) => x + y, 0),
    update: async (uid, name) =>
      !(await graphql(`mutation { schema { updateRegions(input: {UID: "${uid}", Name: "${name}"}) } }`))
        .errors,
    async stop() {
      for (const api of apis) api?.proc.kill("SIGKILL");
      await Promise.all(apis.map((api) => api?.proc.exited));
      await redis.kill();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function startBare(n: number): Promise<Target> {
  const port = freePort();
  const bare = lineProcess([process.execPath, SELF, "bare", String(port)]);
  await bare.nextLine("ready");
  const base = `http://127.0.0.1:${port}`;
  return {
    urls: [`ws://127.0.0.1:${port}/`],
    token: "none",
    pids: [bare.proc.pid],
    uids: Array.from({ length: n }, (_, i) => `r${i}`),
    held: async () => Number(await (await fetch(`${base}/count`)).text()),
    update: async (uid, name) =>
      (await fetch(`${base}/publish`, { method: "POST", body: JSON.stringify({ uid, name }) })).ok,
    async stop() {
      bare.proc.kill();
      await bare.proc.exited;
    },
  };
}

interface Row {
  target: string;
  n: number;
  rate: number;
  sent: number;
  received: number;
  closed: number;
  p50: number;
  p99: number;
  max: number;
  perConnectionKiB: number;
}

/** Connects N clients to `target`, then sends `rate` updates a second for `seconds`. */
async function measure(name: string, target: Target, rate: number, seconds: number): Promise<Row> {
  const n = target.uids.length;
  const rss = () => target.pids.reduce((sum, pid) => sum + residentMiB(pid), 0);
  await Bun.sleep(2000);
  const before = rss();
  const share = Math.ceil(n / CLIENT_PROCESSES);
  const clients = Array.from({ length: CLIENT_PROCESSES }, (_, i) => {
    const spec = {
      urls: target.urls,
      token: target.token,
      uids: target.uids.slice(i * share, (i + 1) * share),
    };
    // Too long for an argument at 10,000 UIDs: handed over in a file.
    const file = join(tmpdir(), `tds-bench-live-clients-${process.pid}-${i}.json`);
    writeFileSync(file, JSON.stringify(spec));
    // Each client process may hold thousands of sockets: raise its descriptor limit first.
    const command = `ulimit -n 20000; exec "$0" "$@"`;
    return lineProcess(["sh", "-c", command, process.execPath, SELF, "client", file]);
  });
  await Promise.all(clients.map((client) => client.nextLine("ready")));
  const deadline = Date.now() + 30_000;
  while ((await target.held()) < n && Date.now() < deadline) await Bun.sleep(100);
  await Bun.sleep(3000);
  const perConnectionKiB = ((rss() - before) * 1024) / n;
  const received = async () =>
    (await Promise.all(clients.map((c) => c.ask("count", "count ")))).reduce((x, y) => x + Number(y), 0);

  let sent = 0;
  let inFlight = 0;
  const start = performance.now();
  for (let k = 0; k < Math.round(rate * seconds); k++) {
    const due = start + (k * 1000) / rate;
    while (performance.now() < due || inFlight >= 200) await Bun.sleep(Math.max(1, due - performance.now()));
    inFlight++;
    void target.update(target.uids[k % n] as string, `n${k}`).then((ok) => {
      inFlight--;
      if (ok) sent++;
    });
  }
  const sendSeconds = (performance.now() - start) / 1000;
  while (inFlight > 0) await Bun.sleep(10);
  // Drained once every update arrived, or the count stood still for 2 s.
  let last = -1;
  for (let still = 0; still < 20; still++) {
    const now = await received();
    if (now >= sent) break;
    if (now !== last) still = 0;
    last = now;
    await Bun.sleep(100);
  }
  const reports = await Promise.all(clients.map(async (c) => JSON.parse(await c.ask("report", "report "))));
  const latencies: number[] = reports.flatMap((r) => r.latencies);
  const samples = latencies.length > 0 ? latencies : [Number.NaN];
  return {
    target: name,
    n,
    rate: Math.round(sent / sendSeconds),
    sent,
    received: reports.reduce((sum, r) => sum + r.received, 0),
    closed: reports.reduce((sum, r) => sum + r.closed, 0),
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: samples.reduce((x, y) => Math.max(x, y)),
    perConnectionKiB,
  };
}

async function main(): Promise<void> {
  const loadBefore = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  const sizes = (process.argv[2] ?? "1000").split(",").map(Number);
  const rates = (process.argv[3] ?? "100,500").split(",").map(Number);
  const seconds = Number(process.argv[4] ?? 10);
  const rows: Row[] = [];
  for (const n of sizes) {
    for (const [name, start] of [
      ["service (2 API processes)", startService],
      ["bare Bun WebSocket server", startBare],
    ] as const) {
      for (const rate of rates) {
        const target = await start(n);
        try {
          rows.push(await measure(name, target, rate, seconds));
        } finally {
          await target.stop();
        }
        console.log(JSON.stringify(rows.at(-1)));
      }
    }
  }
  writeResults(rows, seconds, loadBefore);
}

const RESULTS = join(import.meta.dir, "results/live.md");
const HEADER = `# Live subscriptions at scale

One section per subscriber count, each from its own run of \`bun bench/live.ts <subscribers> <rates> <seconds>\`
(a run rewrites the sections of the counts it ran). N WebSocket clients (graphql-transport-ws, in two client
processes) spread over two API processes on one store and one Redis, each subscribed to its own Region
(\`filter: "UID == '…'"\`, UPDATE only); mutations sent to API A (the feed's lease holder) rename the records in
turn at the rate given. Latency: the event's \`timestamp\` (commit) to its receipt, ms resolution. Lost: updates
committed − events received once the clients' counts stop moving (closed: sockets the server closed). Memory: RSS
growth of the server processes once every client is subscribed, ÷ N. Baseline: the same clients against one bare
Bun WebSocket server that routes each published update to its record's socket (timestamp set on publish).

Targets: p99 ≤ 100 ms, 0 lost.
`;

/** The results file with the sections of `rows`' subscriber counts written (others kept). */
function writeResults(rows: Row[], seconds: number, loadBefore: string): void {
  let sections: string[] = [];
  try {
    sections = readFileSync(RESULTS, "utf8")
      .split(/^(?=## )/m)
      .slice(1);
  } catch {
    // No results yet.
  }
  for (const n of new Set(rows.map((row) => row.n))) {
    const table = rows
      .filter((row) => row.n === n)
      .map(
        (r) =>
          `| ${r.target} | ${r.rate}/s | ${r.sent} | ${r.received} | ${r.sent - r.received} | ${r.closed} | ${r.p50} ms | ${r.p99} ms | ${r.max} ms | ${r.perConnectionKiB.toFixed(1)} KiB |`,
      );
    const title = `## ${n.toLocaleString("en")} subscribers`;
    const section = `${title}

Machine: ${machine()}. Date: ${new Date().toISOString().slice(0, 10)}. Load average before the run: ${loadBefore} (another benchmark shared the machine). \`bun bench/live.ts ${process.argv.slice(2).join(" ")}\`: ${seconds} s per row, each row on fresh processes.

| target | rate | sent | received | lost | closed | p50 | p99 | max | memory / connection |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${table.join("\n")}

`;
    sections = [...sections.filter((s) => !s.startsWith(`${title}\n`)), section];
  }
  // Sections of other titles (notes) go last.
  const count = (s: string) =>
    Number(/^## ([\d,]+) subscribers/.exec(s)?.[1]?.replaceAll(",", "") ?? Number.MAX_SAFE_INTEGER);
  sections.sort((x, y) => count(x) - count(y));
  writeResultsFile(RESULTS, `${HEADER}\n${sections.join("").trimEnd()}\n`);
}

const [mode, arg] = process.argv.slice(2);
if (mode === "client") {
  const spec = JSON.parse(readFileSync(arg as string, "utf8"));
  rmSync(arg as string);
  await runClients(spec);
} else if (mode === "bare") runBare(Number(arg));
else await main();
