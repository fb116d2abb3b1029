/** What the comparison needs from each system under test, once it is started and loaded. */

export const WORKLOADS = {
  W1: "W1 filtered list, 20 rows × 5 fields",
  W2: "W2 20 Jobs + Region + allocations' Resource (2 levels)",
  W3: "W3 mutation inserting one Job",
  W4: "W4 mutation of 10 aliased upserts (Accounts by ExternalId)",
} as const;
export type WorkloadName = keyof typeof WORKLOADS;

export interface SystemUnderTest {
  name: string;
  /** Our service's store engine; absent for a peer. */
  ours?: "sqlite" | "postgres";
  /** The GraphQL endpoint. */
  url: string;
  /** Headers every request carries (credentials, application id). */
  headers: Record<string, string>;
  /** The POST body of each workload; `%n` becomes a per-request counter (fresh keys and values). */
  bodies: Record<WorkloadName, string>;
  /** How the dataset went in, and how long it took. */
  load: { route: string; seconds: number };
  /** Resident memory now, in MiB: the server process, and its database or Redis beside it. */
  memory(): { serverMiB: number; storeMiB: number; storeLabel: string };
  /** The server's and its store's processes (those not started by this run's process tree too). */
  pids(): number[];
  stop(): Promise<void>;
}

/** A GraphQL request body; values travel in variables, the document stays the same between requests. */
export const graphqlBody = (query: string, variables?: Record<string, unknown>) =>
  JSON.stringify(variables === undefined ? { query } : { query, variables });
