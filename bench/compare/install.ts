/**
 * Installs what the comparison needs and the service does not: Debian's
 * PostgreSQL (apt, when missing) and the peers from npm into `bench/.peers/`,
 * a folder of their own with its own package.json, so they never become
 * dependencies of the service.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { postgresBin } from "../../scripts/private-postgres.ts";

export const PEERS_DIR = new URL("../.peers/", import.meta.url).pathname;

/**
 * The peers, pinned. `router` is pinned to 2.2.0 (and hoisted, since parse-server
 * requires `router/lib/layer` without declaring it): router 2.3.0 changed
 * `Layer#match`, which breaks parse-server 9.10.0's in-process calls from Cloud Code.
 */
const PEERS_PACKAGE = {
  name: "bench-peers",
  private: true,
  description: "The comparison's peers (bench/compare.ts); not dependencies of the service.",
  dependencies: {
    express: "5.2.1",
    "parse-server": "9.10.0",
    pg: "8.16.3",
    postgraphile: "5.1.5",
    "postgraphile-plugin-connection-filter": "4.0.1",
    router: "2.2.0",
  },
  overrides: { router: "2.2.0" },
};

function run(command: string[], what: string): void {
  const proc = Bun.spawnSync(command, { stdout: "ignore", stderr: "inherit" });
  if (proc.exitCode !== 0) throw new Error(`${what} failed: ${command.join(" ")}`);
}

/** apt-get installs the Debian packages whose probe file is missing. */
export function ensureDebianPackages(): void {
  const missing = [
    { pkg: "wrk", present: Bun.which("wrk") !== null },
    { pkg: "postgresql", present: postgresBin() !== null },
    { pkg: "redis-server", present: Bun.which("redis-server") !== null },
  ].filter((p) => !p.present);
  if (missing.length === 0) return;
  console.log(`compare: apt-get install ${missing.map((p) => p.pkg).join(" ")}`);
  run(["sh", "-c", "apt-get update -qq"], "apt-get update");
  run(["apt-get", "install", "-y", "-qq", ...missing.map((p) => p.pkg)], "apt-get install");
}

/** npm-installs the peers into bench/.peers when they are missing or their package.json changed. */
export function ensurePeers(): void {
  mkdirSync(PEERS_DIR, { recursive: true });
  const manifest = join(PEERS_DIR, "package.json");
  const wanted = `${JSON.stringify(PEERS_PACKAGE, null, 2)}\n`;
  const current = existsSync(manifest) ? readFileSync(manifest, "utf8") : "";
  if (current === wanted && existsSync(join(PEERS_DIR, "node_modules/parse-server/package.json"))) return;
  writeFileSync(manifest, wanted);
  console.log("compare: npm install (postgraphile, parse-server) into bench/.peers");
  run(
    ["npm", "install", "--prefix", PEERS_DIR, "--no-audit", "--no-fund", "--loglevel=error"],
    "npm install",
  );
}

/** Node.js for Parse Server (its supported runtime); parse-server 9 needs ≥ 20.19. */
export function nodeBinary(): string {
  const node = Bun.which("node");
  if (!node) throw new Error("node is missing: apt-get install nodejs (≥ 20.19)");
  return node;
}
