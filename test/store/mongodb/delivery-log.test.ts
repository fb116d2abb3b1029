/**
 * The API's members of the delivery log on MongoDB, by their pure plans
 * (common/delivery-log/mongodb/delivery-log-plans.ts): the filters, orders and
 * writes they decide, run by mingo over documents of the engine's shape
 * (mingo-log.ts says what that stands in for and what it does not prove: no
 * MongoDB server can run here; indexes, transactions and concurrency are the
 * conformance suite's, on a real server with MONGODB_TEST_URL). Each case
 * holds a plan to what the port promises, with another tenant's and another
 * webhook's documents beside (a filter that forgot one would read them).
 */
import { describe, expect, test } from "bun:test";
import type {
  DeliveryQuery,
  DeliveryRecord,
  ExportedAttempt,
} from "../../../common/delivery-log/delivery-log.ts";
import {
  type AttemptDocument,
  attemptDocumentOf,
  attemptOf,
  attemptsByDelivery,
  type DeliveryDocument,
  deliveryDocumentOf,
  deliveryOf,
  exportedAttemptOf,
} from "../../../common/delivery-log/mongodb/delivery-documents.ts";
import {
  type AgedDelivery,
  agedPlan,
  attemptsPlan,
  deliveryFilter,
  exportPlan,
  importWrites,
  insertDeliveriesWrite,
  listPlan,
  pruneStep,
  resetWrite,
} from "../../../common/delivery-log/mongodb/delivery-log-plans.ts";
import { MingoLog, stored } from "./mingo-log.ts";

const delivery = (
  id: string,
  eventId: string,
  createdAt: number,
  overrides: Partial<DeliveryRecord> = {},
): DeliveryRecord => ({
  tenantId: "ta",
  id,
  webhookId: "w1",
  eventId,
  part: 0,
  status: "pending",
  body: JSON.stringify([{ eventId }]),
  test: false,
  attempts: 0,
  committedAt: createdAt - 1,
  createdAt,
  updatedAt: createdAt,
  ...overrides,
});

const attempt = (n: number, overrides: Partial<ExportedAttempt> = {}): ExportedAttempt => ({
  attempt: n,
  startedAt: 1000 + n,
  durationMs: 5,
  statusCode: 500,
  responseBody: "no",
  error: "HTTP 500",
  request: null,
  inFlight: false,
  ...overrides,
});

/** A log holding `records`, inserted as the change feed logs them. */
function logOf(records: readonly DeliveryRecord[]): MingoLog {
  const log = new MingoLog();
  log.apply([insertDeliveriesWrite(records)]);
  return log;
}

const findDelivery = (log: MingoLog, tenantId: string, id: string) => {
  const found = log.findOne<DeliveryDocument>("deliveries", deliveryFilter(tenantId, id));
  return found ? deliveryOf(found) : null;
};

describe("delivery documents", () => {
  test("a delivery and an attempt read back as they were, through BSON (times past 2³¹ included)", () => {
    const record = delivery("d-1", "m1", 1_760_000_000_000, { test: true, attempts: 3, status: "failed" });
    expect(deliveryOf(stored(deliveryDocumentOf(record)))).toEqual(record);
    const sent = { url: "https://r.example/h", headers: { "x.key": "{{ KEY }}", $odd: "1" } };
    for (const a of [
      attempt(1),
      attempt(2, { request: sent, inFlight: true, statusCode: null, error: null }),
    ]) {
      const document = stored(attemptDocumentOf("ta", "d-1", a));
      expect(exportedAttemptOf(document)).toEqual(a);
      const { inFlight: _, ...read } = a;
      expect(attemptOf(document)).toEqual(read);
    }
  });

  test("the request is kept as JSON text: header names with '.' or '$' are never field names", () => {
    const sent = { url: "https://r.example/h", headers: { "a.b": "1", $c: "2" } };
    const document = attemptDocumentOf("ta", "d-1", attempt(1, { request: sent }));
    expect(typeof document.request).toBe("string");
    expect(document._id).toEqual({ d: "d-1", n: 1 });
    expect(Object.keys(document._id)).toEqual(["d", "n"]);
  });
});

describe("insertDeliveries: inserted if absent", () => {
  test("the same webhook, event and part again leaves the first; the same id again writes nothing", () => {
    const first = delivery("d-1", "m1", 1000);
    const second = { ...delivery("d-2", "m1", 1000), part: 1, test: true };
    const log = logOf([first, second]);
    const again = { ...delivery("d-3", "m1", 2000), body: "[]" };
    // Another tenant's delivery of the same webhook id, event and part is its own.
    const other = { ...delivery("d-4", "m1", 1000), tenantId: "tb" };
    log.apply([insertDeliveriesWrite([again, first, other])]);
    expect(findDelivery(log, "ta", "d-1")).toEqual(first);
    expect(findDelivery(log, "ta", "d-2")).toEqual(second);
    expect(findDelivery(log, "ta", "d-3")).toBeNull();
    expect(findDelivery(log, "tb", "d-4")).toEqual(other);
    expect(findDelivery(log, "tb", "d-1")).toBeNull();
    expect(log.collections.deliveries).toHaveLength(3);
    expect(insertDeliveriesWrite([])).toBeNull();
  });

  test("an upsert on delivery_event's key, setting the rest only on insert (no insert that may fail)", () => {
    const write = insertDeliveriesWrite([delivery("d-1", "m1", 1000)]);
    expect(write).toMatchObject({
      kind: "insertIfAbsent",
      entries: [{ filter: { t: "ta", webhookId: "w1", eventId: "m1", part: 0 } }],
    });
    expect(write?.kind === "insertIfAbsent" && write.entries[0]?.onInsert._id).toBe("d-1");
  });
});

describe("listDeliveries", () => {
  const logged = [
    delivery("d-1", "m1", 1000, { status: "succeeded" }),
    delivery("d-2", "m2", 2000, { status: "failed" }),
    delivery("d-3", "m3", 2000, { status: "failed" }),
    delivery("d-4", "m4", 3000),
    delivery("d-5", "m1", 2500, { webhookId: "w2", status: "failed" }),
    delivery("d-6", "m1", 2200, { tenantId: "tb", status: "failed" }),
  ];
  const log = logOf(logged);
  const list = (query: DeliveryQuery, webhookId = "w1", tenantId = "ta") =>
    log.find<DeliveryDocument>("deliveries", listPlan(tenantId, webhookId, query)).map((d) => d._id);

  test("newest first (createdAt, then id, descending), at most `limit`; the webhook's and the tenant's only", () => {
    expect(list({ limit: 10 })).toEqual(["d-4", "d-3", "d-2", "d-1"]);
    expect(list({ limit: 2 })).toEqual(["d-4", "d-3"]);
    expect(list({ limit: 10 }, "w3")).toEqual([]);
    expect(list({ limit: 10 }, "w1", "tb")).toEqual(["d-6"]);
    expect(listPlan("ta", "w1", { limit: 0 })).toBeNull();
  });

  test("by status, by time window (since inclusive, until exclusive), and after a keyset", () => {
    expect(list({ status: "failed", limit: 10 })).toEqual(["d-3", "d-2"]);
    expect(list({ since: 2000, until: 3000, limit: 10 })).toEqual(["d-3", "d-2"]);
    expect(list({ before: { createdAt: 2000, id: "d-3" }, limit: 10 })).toEqual(["d-2", "d-1"]);
    expect(
      list({ before: { createdAt: 2000, id: "d-2" }, until: 2001, status: "succeeded", limit: 10 }),
    ).toEqual(["d-1"]);
  });

  test("the plan's order is delivery_list's: newest first, the id breaking ties", () => {
    expect(listPlan("ta", "w1", { limit: 1 })?.sort).toEqual({ createdAt: -1, _id: -1 });
  });
});

describe("resetDelivery and listAttempts", () => {
  test("a reset sets the tenant's delivery back to pending at `at`, its count kept; another's or a missing one is untouched", () => {
    const failed = delivery("d-1", "m1", 1000, { status: "failed", attempts: 2 });
    const log = logOf([failed]);
    log.apply([resetWrite("tb", "d-1", 9000), resetWrite("ta", "missing", 9000)]);
    expect(findDelivery(log, "ta", "d-1")).toEqual(failed);
    log.apply([resetWrite("ta", "d-1", 9000)]);
    expect(findDelivery(log, "ta", "d-1")).toEqual({ ...failed, status: "pending", updatedAt: 9000 });
  });

  test("a delivery's attempts are one range of _id, in attempt order; a delivery whose id extends another's is not in it", () => {
    const log = new MingoLog();
    const documents = [
      attemptDocumentOf("ta", "d-1", attempt(2)),
      attemptDocumentOf("ta", "d-10", attempt(1)),
      attemptDocumentOf("ta", "d-1", attempt(1)),
      attemptDocumentOf("ta", "d-", attempt(1)),
      attemptDocumentOf("ta", "d-2", attempt(1, { request: { url: "https://r.example", headers: {} } })),
      attemptDocumentOf("tb", "d-3", attempt(1)),
    ];
    log.apply([{ kind: "insert", collection: "attempts", documents }]);
    const read = (tenantId: string, ids: string[]) =>
      attemptsByDelivery(log.find<AttemptDocument>("attempts", attemptsPlan(tenantId, ids)), attemptOf);
    const attempts = read("ta", ["d-1", "d-2", "d-9"]);
    expect([...attempts.keys()]).toEqual(["d-1", "d-2"]);
    expect(attempts.get("d-1")?.map((a) => a.attempt)).toEqual([1, 2]);
    expect(attempts.get("d-2")?.[0]?.request).toEqual({ url: "https://r.example", headers: {} });
    expect(read("tb", ["d-1"]).size).toBe(0);
    expect(read("ta", ["d-3"]).size).toBe(0);
    expect(attemptsPlan("ta", [])).toBeNull();
  });
});

describe("pruneDeliveries", () => {
  test("every tenant's finished deliveries created and last changed before the cut-off go, with their attempts, a step at a time", () => {
    const cut = 10_000;
    const at = (
      id: string,
      createdAt: number,
      status: DeliveryRecord["status"],
      more: Partial<DeliveryRecord> = {},
    ) => delivery(id, `m-${id}`, createdAt, { status, ...more });
    const logged = [
      at("d-1", 100, "succeeded"),
      at("d-2", 200, "failed", { tenantId: "tb" }),
      at("d-3", 300, "pending"),
      at("d-4", 400, "delivering"),
      at("d-5", 500, "succeeded", { updatedAt: cut }),
      at("d-6", 600, "failed"),
      at("d-7", 700, "succeeded", { tenantId: "tb" }),
      at("d-8", cut + 1, "succeeded"),
    ];
    const log = logOf(logged);
    log.apply([
      { kind: "insert", collection: "attempts", documents: [attemptDocumentOf("ta", "d-1", attempt(1))] },
      { kind: "insert", collection: "attempts", documents: [attemptDocumentOf("ta", "d-3", attempt(1))] },
    ]);
    const steps = [];
    let after = null;
    do {
      const rows = log.find<AgedDelivery>("deliveries", agedPlan(cut, 3, after));
      const { step, writes } = pruneStep(rows, cut, 3);
      log.apply(writes);
      steps.push(step);
      after = step.next;
    } while (after !== null && steps.length < 10);
    expect(steps.map((step) => step.deleted)).toEqual([2, 1, 1]);
    expect(steps.map((step) => step.next)).toEqual([
      { createdAt: 300, id: "d-3" },
      { createdAt: 600, id: "d-6" },
      null,
    ]);
    expect(log.collections.deliveries.map((d) => d._id).sort()).toEqual(["d-3", "d-4", "d-5", "d-8"]);
    expect(log.collections.attempts.map((a) => a._id)).toEqual([{ d: "d-3", n: 1 }]);
    expect(agedPlan(cut, 0, null)).toBeNull();
  });

  test("deliveries created at one time are taken in id order, the step going on after the last it read", () => {
    const logged = ["d-c", "d-a", "d-b"].map((id) => delivery(id, `m-${id}`, 100, { status: "succeeded" }));
    const log = logOf(logged);
    const first = log.find<AgedDelivery>("deliveries", agedPlan(1000, 2, null));
    expect(first.map((d) => d._id)).toEqual(["d-a", "d-b"]);
    const { step } = pruneStep(first, 1000, 2);
    expect(step.next).toEqual({ createdAt: 100, id: "d-b" });
    expect(log.find<AgedDelivery>("deliveries", agedPlan(1000, 2, step.next)).map((d) => d._id)).toEqual([
      "d-c",
    ]);
  });
});

describe("exportDeliveries and importDeliveries", () => {
  test("a tenant's deliveries in id order after `after`, each with all its attempts, copied back as they were", () => {
    const logged = ["d-3", "d-1", "d-2"].map((id, i) => delivery(id, `m${i}`, 1000 + i));
    const source = logOf([...logged, { ...delivery("d-0", "m9", 1000), tenantId: "tb" }]);
    const sent = { url: "https://r.example/h", headers: { "x-key": "{{ KEY }}" } };
    source.apply([
      {
        kind: "insert",
        collection: "attempts",
        documents: [
          attemptDocumentOf("ta", "d-1", attempt(2, { request: sent, inFlight: true, error: "in flight" })),
          attemptDocumentOf("ta", "d-1", attempt(1, { request: sent })),
        ],
      },
    ]);
    const exportPage = (log: MingoLog, after: string | null, limit: number) => {
      const deliveries = log.find<DeliveryDocument>("deliveries", exportPlan("ta", after, limit));
      const attempts = attemptsByDelivery(
        log.find<AttemptDocument>(
          "attempts",
          attemptsPlan(
            "ta",
            deliveries.map((d) => d._id),
          ),
        ),
        exportedAttemptOf,
      );
      return deliveries.map((d) => ({ delivery: deliveryOf(d), attempts: attempts.get(d._id) ?? [] }));
    };
    const all = exportPage(source, null, 10);
    expect(all.map((e) => e.delivery.id)).toEqual(["d-1", "d-2", "d-3"]);
    expect(all[0]?.attempts).toEqual([
      attempt(1, { request: sent }),
      attempt(2, { request: sent, inFlight: true, error: "in flight" }),
    ]);
    expect(exportPage(source, "d-1", 1).map((e) => e.delivery.id)).toEqual(["d-2"]);
    expect(exportPlan("ta", null, 0)).toBeNull();

    const target = new MingoLog();
    target.apply(importWrites(all));
    target.apply(importWrites([]));
    expect(exportPage(target, null, 10)).toEqual(all);
    // Plain inserts: a delivery the log holds already meets the unique index.
    expect(() => target.apply(importWrites(all.slice(0, 1)))).toThrow("duplicate key");
    expect(importWrites(all).map((w) => w.kind)).toEqual(["insert", "insert"]);
  });
});
