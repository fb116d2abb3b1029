/**
 * The comparison's dataset, the same for every system: rows by index, references
 * as indexes into the referenced object's rows. Pure and deterministic, so each
 * loader maps indexes to its own ids and the three stores hold the same records.
 */

export const SIZES = { regions: 10, accounts: 1_000, contacts: 2_000, resources: 50, jobs: 100_000 };

/** A quarter of the Jobs are `Dispatched`; W1 filters on it. */
const JOB_STATUSES = ["Queued", "Dispatched", "Complete", "Cancelled"] as const;
const ZONES = ["Europe/London", "Europe/Paris", "America/New_York", "Asia/Tokyo", "Australia/Sydney"];
const COUNTRIES = ["GB", "FR", "US", "JP", "AU"];
const URGENCIES = ["Low", "Normal", "High"];
const BASE_MS = Date.UTC(2026, 0, 5, 8);

export interface RegionRow {
  name: string;
  timezone: string;
  description: string;
  countryCode: string;
}
export interface AccountRow {
  name: string;
  externalId: string;
  phone: string;
  billingCity: string;
}
export interface ContactRow {
  firstName: string;
  lastName: string;
  email: string;
  title: string;
  account: number;
  region: number;
}
export interface ResourceRow {
  name: string;
  primaryRegion: number;
  category: string;
  resourceType: "Person" | "Asset";
  rating: number;
}
export interface JobRow {
  description: string;
  jobStatus: string;
  urgency: string;
  start: string;
  end: string;
  duration: number;
  region: number;
  account: number;
  contact: number | null;
}
export interface AllocationRow {
  job: number;
  resource: number;
  status: string;
  teamLeader: boolean;
}

export const regionRow = (i: number): RegionRow => ({
  name: `Region ${i}`,
  timezone: ZONES[i % ZONES.length] ?? "UTC",
  description: `Service area ${i}`,
  countryCode: COUNTRIES[i % COUNTRIES.length] ?? "GB",
});

export const accountRow = (i: number): AccountRow => ({
  name: `Account ${i}`,
  externalId: `ACC-${i}`,
  phone: `+44 20 7946 ${String(i % 10_000).padStart(4, "0")}`,
  billingCity: `City ${i % 40}`,
});

export const contactRow = (i: number): ContactRow => ({
  firstName: `Ada${i}`,
  lastName: `Lovelace${i}`,
  email: `contact${i}@example.com`,
  title: i % 2 === 0 ? "Facilities manager" : "Site lead",
  account: i % SIZES.accounts,
  region: i % SIZES.regions,
});

export const resourceRow = (i: number): ResourceRow => ({
  name: `Van ${i}`,
  primaryRegion: i % SIZES.regions,
  category: i % 3 === 0 ? "Electrical" : "Plumbing",
  resourceType: i % 5 === 0 ? "Asset" : "Person",
  rating: i % 5,
});

/** W1 (`Dispatched` and Duration > 30) matches about 22% of the Jobs. */
export function jobRow(i: number): JobRow {
  const duration = i % 240;
  const startMs = BASE_MS + i * 15 * 60_000;
  return {
    description: `Job ${i}`,
    jobStatus: JOB_STATUSES[i % JOB_STATUSES.length] ?? "Queued",
    urgency: URGENCIES[i % URGENCIES.length] ?? "Normal",
    start: new Date(startMs).toISOString(),
    end: new Date(startMs + duration * 60_000).toISOString(),
    duration,
    region: i % SIZES.regions,
    account: i % SIZES.accounts,
    contact: i % 3 === 0 ? i % SIZES.contacts : null,
  };
}

/** Even Jobs get two allocations, odd Jobs one: the first 20 Jobs have 30 (W2's second level). */
export function allocationRows(job: number): AllocationRow[] {
  const count = job % 2 === 0 ? 2 : 1;
  return Array.from({ length: count }, (_, k) => ({
    job,
    resource: (job * 2 + k) % SIZES.resources,
    status: "Dispatched",
    teamLeader: k === 0,
  }));
}

/** Every allocation of the dataset, in Job order. */
export function allAllocations(): AllocationRow[] {
  return Array.from({ length: SIZES.jobs }, (_, job) => allocationRows(job)).flat();
}

/** `[0, 1, …, n - 1]`. */
export const indexes = (n: number) => Array.from({ length: n }, (_, i) => i);
