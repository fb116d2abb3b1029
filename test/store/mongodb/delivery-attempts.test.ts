/**
 * The dispatcher's writes to the delivery log on MongoDB, by their pure plans
 * (common/delivery-log/mongodb/attempt-plans.ts): what a transaction read in,
 * the answer and the writes out, the writes run by mingo over documents of the
 * engine's shape (mingo-log.ts: no MongoDB server can run here; what it does
 * not prove — transactions, the write conflict that numbers concurrent
 * attempts one after the other, indexes — is the conformance suite's on a real
 * server). Each case reads as the shell does (the delivery's count and status,
 * the webhook's version), then plans and writes.
 */
import { describe, expect, test } from "bun:test";
import {
  type AttemptRecord,
  type DeliveryRecord,
  IN_FLIGHT_ERROR,
  OUTCOME_UNKNOWN_ERROR,
} from "../../../common/delivery-log/delivery-log.ts";
import type { AttemptToStart } from "../../../common/delivery-log/delivery-store.ts";
import {
  type CountedDelivery,
  planFinish,
  planRecord,
  planStart,
} from "../../../common/delivery-log/mongodb/attempt-plans.ts";
import {
  type AttemptDocument,
  attemptsByDelivery,
  type DeliveryDocument,
  deliveryOf,
  exportedAttemptOf,
} from "../../../common/delivery-log/mongodb/delivery-documents.ts";
import {
  attemptsPlan,
  deliveryFilter,
  insertDeliveriesWrite,
} from "../../../common/delivery-log/mongodb/delivery-log-plans.ts";
import { MingoLog } from "./mingo-log.ts";

const VERSION = 4;
const sent = { url: "https://r.example/h", headers: { "x-key": "{{ KEY }}" } };

const delivery = (id: string, status: DeliveryRecord["status"] = "pending"): DeliveryRecord => ({
  tenantId: "ta",
  id,
  webhookId: "w1",
  eventId: `m-${id}`,
  part: 0,
  status,
  body: "[]",
  test: false,
  attempts: 0,
  committedAt: 999,
  createdAt: 1000,
  updatedAt: 1000,
});

const outcome = (startedAt: number, statusCode: number | null, error: string | null): AttemptRecord => ({
  startedAt,
  durationMs: 7,
  statusCode,
  responseBody: statusCode === null ? null : "body",
  error,
});

/** The transactions of the dispatcher's port, as the shell runs them, on a log in memory. */
function dispatcherOn(log: MingoLog) {
  const counted = (tenantId: string, id: string) =>
    log.findOne<CountedDelivery>("deliveries", deliveryFilter(tenantId, id));
  return {
    start(deliveryId: string, startedAt: number, webhookVersion: number | null = VERSION, tenantId = "ta") {
      const attempt: AttemptToStart = {
        tenantId,
        deliveryId,
        webhookId: "w1",
        webhookVersion: VERSION,
        startedAt,
        request: sent,
      };
      const { start, writes } = planStart(attempt, counted(tenantId, deliveryId), webhookVersion);
      log.apply(writes);
      return { start, writes: writes.length };
    },
    finish(deliveryId: string, n: number, a: AttemptRecord, status: "pending" | "succeeded" | "failed") {
      log.apply(planFinish("ta", deliveryId, n, a, status));
    },
    record(
      deliveryId: string,
      a: AttemptRecord,
      status: "pending" | "succeeded" | "failed",
      tenantId = "ta",
    ) {
      const { number, writes } = planRecord(tenantId, deliveryId, counted(tenantId, deliveryId), a, status);
      log.apply(writes);
      return number;
    },
  };
}

function logOf(...records: DeliveryRecord[]) {
  const log = new MingoLog();
  log.apply([insertDeliveriesWrite(records)]);
  return log;
}

const attemptsOf = (log: MingoLog, id: string) =>
  attemptsByDelivery(log.find<AttemptDocument>("attempts", attemptsPlan("ta", [id])), exportedAttemptOf).get(
    id,
  ) ?? [];
const deliveryIn = (log: MingoLog, id: string) => {
  const found = log.findOne<DeliveryDocument>("deliveries", deliveryFilter("ta", id));
  return found ? deliveryOf(found) : null;
};

describe("startAttempt", () => {
  test("logged in flight as the next attempt with its request, the delivery delivering and counted", () => {
    const log = logOf(delivery("d-1"));
    expect(dispatcherOn(log).start("d-1", 1500).start).toEqual({ kind: "started", number: 1 });
    expect(deliveryIn(log, "d-1")).toMatchObject({ status: "delivering", attempts: 1, updatedAt: 1500 });
    expect(attemptsOf(log, "d-1")).toEqual([
      {
        attempt: 1,
        startedAt: 1500,
        durationMs: 0,
        statusCode: null,
        responseBody: null,
        error: IN_FLIGHT_ERROR,
        request: sent,
        inFlight: true,
      },
    ]);
  });

  test("nothing is written, and the answer says why: finished, webhook changed or deleted, delivery not logged", () => {
    const log = logOf(delivery("d-1"), delivery("d-2", "succeeded"), delivery("d-3", "failed"));
    const dispatcher = dispatcherOn(log);
    const before = JSON.stringify(log.collections);
    expect(dispatcher.start("d-2", 1500)).toEqual({
      start: { kind: "finished", status: "succeeded" },
      writes: 0,
    });
    expect(dispatcher.start("d-3", 1500)).toEqual({
      start: { kind: "finished", status: "failed" },
      writes: 0,
    });
    expect(dispatcher.start("d-1", 1500, VERSION + 1)).toEqual({
      start: { kind: "webhook-changed" },
      writes: 0,
    });
    expect(dispatcher.start("d-1", 1500, null)).toEqual({ start: { kind: "webhook-changed" }, writes: 0 });
    expect(dispatcher.start("missing", 1500)).toEqual({ start: { kind: "unlogged" }, writes: 0 });
    expect(dispatcher.start("missing", 1500, null)).toEqual({
      start: { kind: "webhook-changed" },
      writes: 0,
    });
    // Another tenant's delivery of that id is not this one's.
    expect(dispatcher.start("d-1", 1500, VERSION, "tb")).toEqual({ start: { kind: "unlogged" }, writes: 0 });
    expect(JSON.stringify(log.collections)).toBe(before);
  });

  test("attempts a stopped dispatcher left in flight are closed as unknown; other deliveries' are untouched", () => {
    const log = logOf(delivery("d-1"), delivery("d-10"));
    const dispatcher = dispatcherOn(log);
    dispatcher.start("d-10", 1400);
    // Killed twice before any outcome: each next attempt closes the ones before it.
    dispatcher.start("d-1", 1500);
    dispatcher.start("d-1", 1600);
    expect(dispatcher.start("d-1", 1700).start).toEqual({ kind: "started", number: 3 });
    const attempts = attemptsOf(log, "d-1");
    expect(attempts.map((a) => [a.attempt, a.inFlight, a.error])).toEqual([
      [1, false, OUTCOME_UNKNOWN_ERROR],
      [2, false, OUTCOME_UNKNOWN_ERROR],
      [3, true, IN_FLIGHT_ERROR],
    ]);
    expect(attemptsOf(log, "d-10").map((a) => [a.attempt, a.inFlight])).toEqual([[1, true]]);
    expect(deliveryIn(log, "d-1")).toMatchObject({ attempts: 3, status: "delivering" });
  });
});

describe("finishAttempt and recordAttempt", () => {
  test("a finish fills in the started attempt's outcome and sets the delivery's status, even after it was closed as unknown", () => {
    const log = logOf(delivery("d-1"));
    const dispatcher = dispatcherOn(log);
    dispatcher.start("d-1", 1500);
    dispatcher.start("d-1", 1600);
    const failed = outcome(1500, 503, "HTTP 503");
    dispatcher.finish("d-1", 1, failed, "pending");
    const ok = outcome(1600, 200, null);
    dispatcher.finish("d-1", 2, ok, "succeeded");
    expect(attemptsOf(log, "d-1")).toEqual([
      { attempt: 1, ...failed, request: sent, inFlight: false },
      { attempt: 2, ...ok, request: sent, inFlight: false },
    ]);
    expect(deliveryIn(log, "d-1")).toMatchObject({ status: "succeeded", attempts: 2, updatedAt: 1607 });
  });

  test("a recorded attempt is appended, counted, not in flight and without a request; earlier ones in flight closed", () => {
    const log = logOf(delivery("d-1"));
    const dispatcher = dispatcherOn(log);
    const failed = outcome(1500, 500, "HTTP 500");
    expect(dispatcher.record("d-1", failed, "pending")).toBe(1);
    dispatcher.start("d-1", 1600);
    const broken = outcome(1700, null, "template: no such variable");
    expect(dispatcher.record("d-1", broken, "failed")).toBe(3);
    expect(attemptsOf(log, "d-1")).toEqual([
      { attempt: 1, ...failed, request: null, inFlight: false },
      expect.objectContaining({ attempt: 2, request: sent, inFlight: false, error: OUTCOME_UNKNOWN_ERROR }),
      { attempt: 3, ...broken, request: null, inFlight: false },
    ]);
    expect(deliveryIn(log, "d-1")).toMatchObject({ status: "failed", attempts: 3, updatedAt: 1707 });
  });

  test("a delivery not logged (or another tenant's) records nothing and answers null", () => {
    const log = logOf(delivery("d-1"));
    const before = JSON.stringify(log.collections);
    expect(dispatcherOn(log).record("missing", outcome(1, 200, null), "succeeded")).toBeNull();
    expect(dispatcherOn(log).record("d-1", outcome(1, 200, null), "succeeded", "tb")).toBeNull();
    expect(JSON.stringify(log.collections)).toBe(before);
  });
});
