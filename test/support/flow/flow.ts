/**
 * One end-to-end flow: the real service (Redis, API, dispatcher processes), a
 * recording receiver, the custom object and webhooks the writers exercise,
 * and writers that send mutations — at a pace, for a count or a time — while
 * a scenario does its damage. The flow gathers every committed mutation and
 * checks the receiver against them.
 */
import { type ReceivedRequest, type Receiver, type Responder, startReceiver } from "../receiver.ts";
import { type ServiceOptions, startService } from "../service-processes.ts";
import { type ApiClient, apiClient, waitForApi } from "./api-client.ts";
import { type CreatedHook, checkDeliveries, type DeliveryFigures } from "./delivery-check.ts";
import { GADGETS, HOOK_SPECS, subscriptionOf } from "./hook-specs.ts";
import { type RunOptions, runWriters, type WriteRun } from "./write-run.ts";
import {
  type CommittedMutation,
  createWriter,
  type StepOutcome,
  type Writer,
  type WriterOptions,
} from "./writer.ts";

export interface FlowOptions {
  service?: ServiceOptions;
  writers?: number;
  profile?: WriterOptions["profile"];
  /**
   * One receiver (one endpoint) per webhook, as when each webhook has its own
   * subscriber; default: one receiver for all, so all share one endpoint's limit.
   */
  receiverPerHook?: boolean;
  /** Default: `variables` for every writer; `mixed`: even writers inline their values. */
  style?: "variables" | "mixed";
  seed?: number;
}

export type Flow = Awaited<ReturnType<typeof openFlow>>;

/** A delivery as `GET /webhooks/{id}/deliveries` lists it. */
export interface LoggedDelivery {
  id: string;
  status: string;
  attemptCount: number;
  attempts: { statusCode: number | null; error: string | null }[];
}

export interface SettledFigures extends DeliveryFigures {
  /** From the call to the last expected delivery received. */
  receivedMs: number;
  /** From the call to the end of the checks (the delivery log read included). */
  settleMs: number;
  /** Deliveries the log does not show succeeded (NaN when the log was not read). */
  unfinished: number;
}

/** Starts everything and prepares the tenant. Always `close()` it (in a finally). */
export async function openFlow(options: FlowOptions = {}) {
  const service = await startService(options.service);
  const requests: ReceivedRequest[] = [];
  let responder: Responder = () => new Response("ok");
  const answer: Responder = (r, i) => responder(r, i);
  const ports = new Map<string, number>();
  const receivers = new Map<string, Receiver>();
  for (const spec of HOOK_SPECS) {
    const shared = options.receiverPerHook ? undefined : [...receivers.values()][0];
    const receiver = shared ?? startReceiver(answer, { requests });
    receivers.set(spec.name, receiver);
    ports.set(spec.name, receiver.port);
  }
  const distinct = () => [...new Set(receivers.values())];
  let down = false;
  const close = async () => {
    if (!down) await Promise.all(distinct().map((r) => r.stop()));
    down = true;
    await service.stop();
  };
  try {
    const client = apiClient(service.base, service.token);
    const created = await client.request("POST", "/custom/standalone/schemas", { body: GADGETS });
    if (created.status !== 200)
      throw new Error(`creating Gadgets answered ${created.status}: ${created.text}`);
    const hooks: CreatedHook[] = [];
    for (const spec of HOOK_SPECS) {
      const answer = await client.request("POST", "/webhooks", {
        body: {
          name: spec.name,
          url: `${receivers.get(spec.name)?.url}/${spec.name}`,
          type: "graphql",
          query: subscriptionOf(spec),
        },
      });
      if (answer.status !== 201)
        throw new Error(`webhook ${spec.name} answered ${answer.status}: ${answer.text}`);
      hooks.push({ spec, id: answer.body.result.id, secret: answer.body.result.secret });
    }
    const committed: CommittedMutation[] = [];
    // The writers' jobs point at one region; its insert is a change like any other.
    const sentAt = Date.now();
    const base = await client.graphql(
      `mutation { schema { r: insertRegions(input: {Name: "Base", Timezone: "UTC", Description: "base"}) } }`,
    );
    const regionId = (base.data?.schema as { r: string } | undefined)?.r;
    if (!regionId) throw new Error(`inserting the base region failed: ${JSON.stringify(base)}`);
    const values = { Name: "Base", Timezone: "UTC", Description: "base", UID: regionId };
    committed.push({
      writer: 0,
      seq: 0,
      changes: [{ object: "Regions", operation: "INSERT", before: null, after: values }],
      sentAt,
      ackedAt: Date.now(),
    });
    const runTag = Math.random().toString(36).slice(2, 8);
    const writers: Writer[] = Array.from({ length: options.writers ?? 4 }, (_, i) =>
      createWriter(client, {
        id: i + 1,
        seed: (options.seed ?? 1) * 1000 + i,
        regionId,
        profile: options.profile ?? "mixed",
        runTag,
        style: options.style === "mixed" && i % 2 === 1 ? "inline" : "variables",
      }),
    );

    /** Sends mutations from every writer until the count or time is reached. */
    const write = (run: RunOptions): Promise<WriteRun> =>
      runWriters(
        writers.map((writer) => ({ writer, committed })),
        run,
        resolveLost,
      );

    /** Waits for the API, then reads back; the API may die again meanwhile, so this retries (bounded). */
    async function resolveLost(
      writer: Writer,
      outcome: Extract<StepOutcome, { kind: "unknown" }>,
      timeoutMs: number,
    ): Promise<CommittedMutation | null> {
      const deadline = Date.now() + timeoutMs;
      let last: unknown = null;
      while (Date.now() < deadline) {
        try {
          await waitForApi(service.base, { healthy: false, timeoutMs: Math.max(1, deadline - Date.now()) });
          return await writer.resolve(outcome);
        } catch (error) {
          if (String(error).includes("partly applied")) throw error;
          last = error;
          await Bun.sleep(50);
        }
      }
      throw new Error(
        `could not learn the fate of a mutation whose answer was lost (${outcome.reason}): ${last}`,
      );
    }

    /** Checks the receiver against every committed mutation so far. */
    const check = (): Promise<DeliveryFigures> => checkDeliveries(hooks, committed, requests);

    /** Every delivery of every webhook in the service's delivery log (`GET /webhooks/{id}/deliveries`). */
    async function deliveryLog(): Promise<LoggedDelivery[]> {
      const logged: LoggedDelivery[] = [];
      for (const hook of hooks) {
        let cursor: string | null = null;
        do {
          const page = await client.request(
            "GET",
            `/webhooks/${hook.id}/deliveries?limit=200${cursor ? `&cursor=${cursor}` : ""}`,
          );
          if (page.status !== 200) throw new Error(`the delivery log answered ${page.status}: ${page.text}`);
          logged.push(...(page.body.result as LoggedDelivery[]));
          cursor = page.body.nextCursor;
        } while (cursor);
      }
      return logged;
    }

    /**
     * Polls until nothing is lost and (with `log`, the default) the delivery log
     * shows every delivery succeeded, within `timeoutMs`; returns the last figures either way.
     */
    async function settle(timeoutMs: number, { log = true } = {}): Promise<SettledFigures> {
      const started = Date.now();
      let figures = await check();
      while (figures.lost > 0 && Date.now() - started < timeoutMs) {
        await Bun.sleep(100);
        figures = await check();
      }
      // When the last request arrived, not when this loop (whose checks take time) noticed it.
      const lastReceipt = requests.reduce((last, request) => Math.max(last, request.receivedAt), started);
      const receivedMs = figures.lost > 0 ? Date.now() - started : lastReceipt - started;
      let unfinished = Number.NaN;
      if (log) {
        for (;;) {
          unfinished = (await deliveryLog()).filter((d) => d.status !== "succeeded").length;
          if (unfinished === 0 || Date.now() - started > timeoutMs) break;
          await Bun.sleep(200);
        }
        // Deliveries finishing meanwhile may have been sent again: count them too.
        figures = await check();
      }
      return { ...figures, receivedMs, settleMs: Date.now() - started, unfinished };
    }

    return {
      service,
      client: client as ApiClient,
      hooks,
      writers,
      committed,
      requests,
      write,
      check,
      settle,
      deliveryLog,
      /** Changes how the receiver answers. */
      respondWith(next: Responder) {
        responder = next;
      },
      /** Takes the receivers off the network (connections refused). */
      async receiverDown() {
        if (down) return;
        down = true;
        await Promise.all(distinct().map((r) => r.stop()));
      },
      /** Brings the receivers back on their ports. */
      receiverUp() {
        if (!down) return;
        down = false;
        const byPort = new Map<number, Receiver>();
        for (const [name, port] of ports) {
          const receiver = byPort.get(port) ?? startReceiver(answer, { port, requests });
          byPort.set(port, receiver);
          receivers.set(name, receiver);
        }
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
