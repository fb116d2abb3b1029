/**
 * The cluster command (`npm run cluster -- --api 3 --dispatchers 2`): a
 * private PostgreSQL and Redis (unless DATABASE_URL / REDIS_URL name
 * servers), N API processes and M dispatchers on them, and a round-robin
 * balancer in front; prints the addresses and an administrator token. A
 * process that dies is started again; Ctrl-C or SIGTERM stops everything and
 * removes the temporary data.
 */
import { ConfigError } from "../common/errors.ts";
import { parseClusterOptions } from "./cluster-options.ts";
import { type LocalCluster, startLocalCluster } from "./local-cluster.ts";

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function summary(cluster: LocalCluster): string {
  const { balancer, apis, dispatchers } = cluster;
  const ws = balancer.url.replace(/^http/, "ws");
  const rows = [
    `Cluster ready: ${plural(apis.length, "API process", "API processes")}, ${plural(dispatchers.length, "dispatcher", "dispatchers")}.`,
    `  balancer       ${balancer.url}  (round robin over the API processes; GraphQL ${balancer.url}/graphql/graphql, live subscriptions ${ws}/graphql/subscriptions, console ${balancer.url}/console)`,
    ...apis.map((p) => `  ${p.spec.name.padEnd(13)}  ${p.spec.url}  (pid ${p.pid()})`),
    ...dispatchers.map(
      (p) =>
        `  ${p.spec.name.padEnd(13)}  ${p.spec.url}  (operations: /metrics, /healthz, /readyz; pid ${p.pid()})`,
    ),
    `  PostgreSQL     ${cluster.database.url}${cluster.database.private ? "  (private, removed at stop)" : ""}`,
    `  Redis          ${cluster.redis.url}${cluster.redis.private ? "  (private, removed at stop)" : ""}`,
    `  temporary data ${cluster.dir}`,
  ];
  if (cluster.generatedSecrets)
    rows.push(
      "JWT_SECRET and SECRETS_KEY were generated for this run: set both to keep tokens and secrets valid on a store that outlives it.",
    );
  rows.push(
    cluster.token
      ? `Administrator token for tenant 'default' (shown once, keep it like a password):\n${cluster.token}`
      : cluster.tokenHint,
    "A process that dies is started again. Ctrl-C stops everything.",
  );
  return rows.join("\n");
}

async function main(): Promise<void> {
  const options = parseClusterOptions(process.argv.slice(2), process.env);
  const print = (line: string) => console.log(line);
  console.log(
    `Starting ${options.DATABASE_URL ? "" : "a private PostgreSQL, "}${options.REDIS_URL ? "" : "a private Redis, "}${plural(options["--api"], "API process", "API processes")} and ${plural(options["--dispatchers"], "dispatcher", "dispatchers")}…`,
  );
  // Registered before anything starts: a Ctrl-C during start-up still stops what started (PostgreSQL is
  // no child of ours, pg_ctl detaches it, so nothing else would end it).
  let cluster: LocalCluster | null = null;
  let stopping = false;
  const stop = async () => {
    if (stopping || !cluster) {
      stopping = true;
      return;
    }
    stopping = true;
    console.log("Stopping the cluster…");
    await cluster.stop();
    console.log("Cluster stopped; temporary data removed.");
    process.exit(0);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void stop());
  cluster = await startLocalCluster(options, print);
  if (stopping) {
    stopping = false;
    return stop();
  }
  console.log(summary(cluster));
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `cluster: ${error.message}` : error);
  process.exit(1);
});
