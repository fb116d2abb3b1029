/**
 * Many tenants writing at once through one address (the balancer in front of
 * several API processes): each tenant its own administrator, custom object,
 * webhooks (test/support/flow/hook-specs.ts) and receiving server, and one
 * writer (writer.ts) keeping the model of what it committed. The running
 * service and the address in; the tenants, a paced write loop over all of
 * them and the delivery figures summed over every tenant out.
 */
import { type ReceivedRequest, type Receiver, type Responder, startReceiver } from "../receiver.ts";
import type { RunningService } from "../service-processes.ts";
import { type ApiClient, apiClient } from "./api-client.ts";
import { type CreatedHook, checkDeliveries, type DeliveryFigures, summarize } from "./delivery-check.ts";
import type { LoggedDelivery } from "./flow.ts";
import { GADGETS, HOOK_SPECS, subscriptionOf } from "./hook-specs.ts";
import { type RunOptions, runWriters, type WriteRun } from "./write-run.ts";
import { type CommittedMutation, createWriter, type StepOutcome, type Writer } from "./writer.ts";

/** One tenant of the run. */
export interface WritingTenant {
  name: string;
  client: ApiClient;
  hooks: CreatedHook[];
  receiver: Receiver;
  writer: Writer;
  committed: CommittedMutation[];
}

/** Tenants made this many at a time (each is an admin-tool process). */
const TENANTS_AT_ONCE = 4;

/** The answer's `result`. @throws when the status is not `status`. */
async function must(
  answer: Promise<{ status: number; text: string; body: unknown }>,
  status: number,
  what: string,
) {
  const got = await answer;
  if (got.status !== status) throw new Error(`${what} answered ${got.status}: ${got.text}`);
  return (got.body as { result: { id: string; secret: string } }).result;
}

/** Prepares one tenant whose administrator holds `token`: its object, webhooks, base region and writer. */
async function prepareTenant(
  name: string,
  base: string,
  token: string,
  index: number,
  respond: Responder,
  seed: number,
): Promise<WritingTenant> {
  const client = apiClient(base, token);
  const receiver = startReceiver(respond);
  try {
    await must(
      client.request("POST", "/custom/standalone/schemas", { body: GADGETS }),
      200,
      `${name}: Gadgets`,
    );
    const hooks: CreatedHook[] = [];
    for (const spec of HOOK_SPECS) {
      const body = {
        name: spec.name,
        url: `${receiver.url}/${spec.name}`,
        type: "graphql",
        query: subscriptionOf(spec),
      };
      const created = await must(client.request("POST", "/webhooks", { body }), 201, `${name}: ${spec.name}`);
      hooks.push({ spec, id: created.id, secret: created.secret });
    }
    const sentAt = Date.now();
    const region = await client.graphql(
      `mutation { schema { r: insertRegions(input: {Name: "Base", Timezone: "UTC", Description: "base"}) } }`,
    );
    const regionId = (region.data?.schema as { r?: string } | undefined)?.r;
    if (!regionId) throw new Error(`${name}: inserting the base region failed: ${JSON.stringify(region)}`);
    const after = { Name: "Base", Timezone: "UTC", Description: "base", UID: regionId };
    const committed: CommittedMutation[] = [
      {
        writer: index,
        seq: 0,
        changes: [{ object: "Regions", operation: "INSERT", before: null, after }],
        sentAt,
        ackedAt: Date.now(),
      },
    ];
    const runTag = `${name}-${Math.random().toString(36).slice(2, 8)}`;
    const writer = createWriter(client, {
      id: index,
      seed: seed * 1000 + index,
      regionId,
      profile: "mixed",
      runTag,
    });
    return { name, client, hooks, receiver, writer, committed };
  } catch (error) {
    await receiver.stop();
    throw error;
  }
}

/**
 * `count` tenants on `service`, reached at `base`: `default` (the service's own token) and
 * `count - 1` made with the admin tool. Each receiver answers with `respond`.
 */
export async function openTenants(
  service: RunningService,
  base: string,
  count: number,
  options: { respond: Responder; seed?: number },
): Promise<WritingTenant[]> {
  const names = Array.from({ length: count - 1 }, (_, i) => `tenant-${i + 2}`);
  const tokens = [service.token];
  for (let i = 0; i < names.length; i += TENANTS_AT_ONCE) {
    const made = await Promise.all(
      names
        .slice(i, i + TENANTS_AT_ONCE)
        .map((name) => service.admin(["create-tenant", name, "--admin", "owner"])),
    );
    tokens.push(...made.map((output) => output.trim().split("\n").at(-1) ?? ""));
  }
  const tenants: WritingTenant[] = [];
  try {
    for (const [i, token] of tokens.entries())
      tenants.push(
        await prepareTenant(
          i === 0 ? "default" : (names[i - 1] as string),
          base,
          token,
          i + 1,
          options.respond,
          options.seed ?? 1,
        ),
      );
  } catch (error) {
    await Promise.all(tenants.map((t) => t.receiver.stop()));
    throw error;
  }
  return tenants;
}

/**
 * Every tenant's writer writes, at `ratePerSecond` over all (unpaced when absent), until the count
 * or time of `run`. An answer that never came (an API process killed, a 502 from the balancer) is
 * resolved by reading back through the same address, retried until `recoveryTimeoutMs` (default 30 s).
 */
export function writeAll(tenants: readonly WritingTenant[], run: RunOptions): Promise<WriteRun> {
  return runWriters(tenants, run, resolveLost);
}

/** Reads back whether a mutation whose answer was lost took effect; retries while no API answers. */
async function resolveLost(
  writer: Writer,
  outcome: Extract<StepOutcome, { kind: "unknown" }>,
  timeoutMs: number,
): Promise<CommittedMutation | null> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  while (Date.now() < deadline) {
    try {
      return await writer.resolve(outcome);
    } catch (error) {
      if (String(error).includes("partly applied")) throw error;
      last = error;
      await Bun.sleep(100);
    }
  }
  throw new Error(
    `could not learn the fate of a mutation whose answer was lost (${outcome.reason}): ${last}`,
  );
}

/** The figures of every tenant, summed; latency over all of them. */
export async function checkTenants(tenants: WritingTenant[]): Promise<DeliveryFigures> {
  const each = await Promise.all(
    tenants.map((t) => checkDeliveries(t.hooks, t.committed, t.receiver.requests)),
  );
  const sum = (pick: (f: DeliveryFigures) => number) => each.reduce((total, f) => total + pick(f), 0);
  const receipts = each.flatMap((f) => f.receipts);
  return {
    mutations: sum((f) => f.mutations),
    expected: sum((f) => f.expected),
    requests: sum((f) => f.requests),
    delivered: sum((f) => f.delivered),
    duplicates: sum((f) => f.duplicates),
    lost: sum((f) => f.lost),
    unexpected: sum((f) => f.unexpected),
    badSignatures: sum((f) => f.badSignatures),
    badTimestamps: sum((f) => f.badTimestamps),
    latency: summarize(receipts.map((r) => r.ms)),
    receipts,
    problems: each.flatMap((f, i) => f.problems.map((p) => `${tenants[i]?.name}: ${p}`)).slice(0, 10),
  };
}

/** Deliveries of every tenant's webhooks the delivery log does not show succeeded. */
export async function unfinishedDeliveries(tenants: WritingTenant[]): Promise<number> {
  let unfinished = 0;
  for (const tenant of tenants)
    for (const hook of tenant.hooks) {
      let cursor: string | null = null;
      do {
        const page = await tenant.client.request(
          "GET",
          `/webhooks/${hook.id}/deliveries?limit=200${cursor ? `&cursor=${cursor}` : ""}`,
        );
        if (page.status !== 200) throw new Error(`the delivery log answered ${page.status}: ${page.text}`);
        unfinished += (page.body.result as LoggedDelivery[]).filter((d) => d.status !== "succeeded").length;
        cursor = page.body.nextCursor;
      } while (cursor);
    }
  return unfinished;
}

/**
 * Per webhook, deliveries received (first receipt) before a delivery of a mutation its tenant
 * committed earlier. Informative: webhooks are delivered at least once, concurrently, in no
 * promised order; each element's commit order is checked by `checkDeliveries` (its timestamp
 * within its mutation's send → answer window, each tenant's writer sending one at a time).
 */
export function receivedOutOfCommitOrder(requests: readonly ReceivedRequest[]): number {
  const firstByRequestId = new Map<string, ReceivedRequest>();
  for (const request of requests) {
    const id = request.headers["service-request-id"] ?? "";
    if (!firstByRequestId.has(id)) firstByRequestId.set(id, request);
  }
  const latestCommitByHook = new Map<string, number>();
  let outOfOrder = 0;
  for (const request of firstByRequestId.values()) {
    const hook = request.headers["service-webhook-id"] ?? "";
    const committedAt = Date.parse(/"timestamp":"([^"]+)"/.exec(request.body)?.[1] ?? "");
    if (Number.isNaN(committedAt)) continue;
    const latest = latestCommitByHook.get(hook) ?? Number.NEGATIVE_INFINITY;
    if (committedAt < latest) outOfOrder++;
    else latestCommitByHook.set(hook, committedAt);
  }
  return outOfOrder;
}
