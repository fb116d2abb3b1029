/**
 * Compares what a receiver got with what the writers' committed mutations
 * must have produced: committed mutations and received requests in, the
 * figures out — expected, delivered, duplicated (retries of one
 * `service-request-id`), lost, unexpected, bad signatures, bad timestamps,
 * and latency from commit (the element's `timestamp`) to receipt (the
 * receiver's clock, same machine).
 */
import type { ReceivedRequest } from "../receiver.ts";
import { standardWebhooksProblem } from "../standard-webhooks.ts";
import { canonicalBody, expectedElement, type HookSpec } from "./hook-specs.ts";
import type { CommittedMutation } from "./writer.ts";

/** A webhook created on the service from a spec. */
export interface CreatedHook {
  spec: HookSpec;
  id: string;
  secret: string;
}

export interface DeliveryFigures {
  /** Committed mutations (acknowledged, or found committed after a lost answer). */
  mutations: number;
  /** Deliveries those mutations must produce (one per webhook per mutation with a matching change). */
  expected: number;
  /** POSTs the receiver got. */
  requests: number;
  /** Expected deliveries received at least once. */
  delivered: number;
  /** Requests beyond the first for one `service-request-id` (retries; allowed). */
  duplicates: number;
  /** Expected deliveries never received. */
  lost: number;
  /** Received deliveries nobody expected (wrong body or webhook), or one expected body under a second request id. */
  unexpected: number;
  badSignatures: number;
  /** Elements whose timestamp is not between the mutation's sending and its answer. */
  badTimestamps: number;
  /** Commit → first receipt, ms. */
  latency: LatencySummary;
  /** Each delivery's commit time and its commit → first receipt, ms, in no particular order. */
  receipts: { committedAt: number; ms: number }[];
  /** The first few problems, in words. */
  problems: string[];
}

interface Expected {
  mutation: CommittedMutation;
  requestIds: Set<string>;
  firstReceipt: number;
  timestamp: number;
}

export interface LatencySummary {
  p50: number;
  p99: number;
  max: number;
  samples: number;
}

/** The p-th percentile (0–100) of `samples`, nearest rank. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
}

/** p50, p99 and max of `samples` (ms). */
export function summarize(samples: number[]): LatencySummary {
  return {
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: samples.length > 0 ? samples.reduce((a, b) => Math.max(a, b)) : Number.NaN,
    samples: samples.length,
  };
}

/** `p50 / p99 / max ms`, as the results files write it. */
export const latencyText = ({ p50, p99, max }: LatencySummary) => `${p50} / ${p99} / ${max} ms`;

/** Checks every received request against the committed mutations. */
export async function checkDeliveries(
  hooks: CreatedHook[],
  mutations: CommittedMutation[],
  requests: ReceivedRequest[],
): Promise<DeliveryFigures> {
  const problems: string[] = [];
  const note = (problem: string) => {
    if (problems.length < 10) problems.push(problem);
  };
  const expected = new Map<string, Expected>();
  for (const mutation of mutations) {
    for (const hook of hooks) {
      const elements = mutation.changes.map((c) => expectedElement(hook.spec, c)).filter((e) => e !== null);
      if (elements.length === 0) continue;
      const key = `${hook.id}|${JSON.stringify(elements)}`;
      if (expected.has(key)) throw new Error(`the model expects one body twice (tags not unique): ${key}`);
      expected.set(key, { mutation, requestIds: new Set(), firstReceipt: Number.NaN, timestamp: Number.NaN });
    }
  }
  const hooksById = new Map(hooks.map((h) => [h.id, h]));
  const bodyOfRequestId = new Map<string, string>();
  const counts = { duplicates: 0, unexpected: 0, badSignatures: 0, badTimestamps: 0 };
  for (const request of requests) {
    const requestId = request.headers["service-request-id"] ?? "";
    const hook = hooksById.get(request.headers["service-webhook-id"] ?? "");
    if (!hook || request.path !== `/${hook.spec.name}` || requestId === "") {
      counts.unexpected++;
      note(`request to ${request.path} for no known webhook or without a request id`);
      continue;
    }
    const signatureProblem = await standardWebhooksProblem(hook.secret, request, {
      nowSeconds: Math.floor(request.receivedAt / 1000),
    });
    if (signatureProblem) {
      counts.badSignatures++;
      note(`${requestId}: ${signatureProblem}`);
    }
    if (!request.headers["content-type"]?.startsWith("application/json")) note(`${requestId}: not JSON`);
    const seen = bodyOfRequestId.get(requestId);
    if (seen !== undefined) {
      counts.duplicates++;
      if (seen !== request.body) note(`${requestId}: a retry carried a different body`);
      continue;
    }
    bodyOfRequestId.set(requestId, request.body);
    let parsed: unknown;
    try {
      parsed = JSON.parse(request.body);
    } catch {
      counts.unexpected++;
      note(`${requestId}: body is not JSON`);
      continue;
    }
    const { text, timestamps } = canonicalBody(parsed);
    const entry = expected.get(`${hook.id}|${text}`);
    if (!entry) {
      counts.unexpected++;
      note(`${hook.spec.name} got an unexpected body: ${text.slice(0, 300)}`);
      continue;
    }
    entry.requestIds.add(requestId);
    if (entry.requestIds.size > 1) {
      counts.unexpected++;
      note(`${hook.spec.name}: one change delivered under two request ids`);
      continue;
    }
    entry.firstReceipt = request.receivedAt;
    const times = new Set(timestamps.map((t) => Date.parse(t)));
    const [time] = times;
    const { sentAt, ackedAt } = entry.mutation;
    // Timestamps are whole milliseconds: allow one either side.
    if (
      times.size !== 1 ||
      time === undefined ||
      time < sentAt - 1 ||
      (ackedAt !== null && time > ackedAt + 1)
    ) {
      counts.badTimestamps++;
      note(`${requestId}: timestamps ${timestamps.join(", ")} outside [${sentAt}, ${ackedAt}]`);
    } else entry.timestamp = time;
  }
  const all = [...expected.values()];
  const lostOnes = all.filter((e) => e.requestIds.size === 0);
  for (const lost of lostOnes.slice(0, 3))
    note(`lost: ${JSON.stringify(lost.mutation.changes).slice(0, 300)}`);
  const receipts = all
    .filter((e) => !Number.isNaN(e.timestamp))
    .map((e) => ({ committedAt: e.timestamp, ms: e.firstReceipt - e.timestamp }));
  return {
    mutations: mutations.length,
    expected: expected.size,
    requests: requests.length,
    delivered: all.length - lostOnes.length,
    lost: lostOnes.length,
    ...counts,
    latency: summarize(receipts.map((r) => r.ms)),
    receipts,
    problems,
  };
}
