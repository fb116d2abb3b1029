/**
 * Retention over a real store file: the sweeper deletes finished deliveries
 * (with their attempts) past the delivery-log retention and change-log entries
 * the feed passed past the change-log retention, and nothing else. The
 * deliveries' attempts are written by the dispatcher's own delivery store; what
 * is left is read back through the REST API, as an administrator would.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ChangeEntry } from "../../api/model/record-values.ts";
import { createRetentionSweeper, type RetentionRules } from "../../api/retention/retention-sweeper.ts";
import type { DeliveryRecord, DeliveryStatus, StoreReader } from "../../api/store/store.ts";
import type { DeliveryStore } from "../../common/delivery-log/delivery-store.ts";
import { openDeliveryStore } from "../../common/delivery-log/open-delivery-store.ts";
import { createLogger } from "../../common/log.ts";
import { storeLocationOf } from "../../common/store/store-location.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { partitionOf } from "../support/change-log.ts";
import { SQL_UNDER_PORT, storeSql } from "../support/store-sql.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RULES: RetentionRules = { deliveryLogMs: 30 * DAY, changeLogMs: 24 * HOUR };

let t: TestApp;
let acme: ProvisionedTenant;
let dispatcherStore: DeliveryStore;
let webhookId = "";
const now = Date.now();

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.provision("acme");
  dispatcherStore = await openDeliveryStore(storeLocationOf(t.storeEnv));
  const created = await t.call("POST", "/webhooks", {
    token: acme.adminToken,
    body: {
      name: "jobs",
      url: "http://127.0.0.1:9/hook",
      type: "graphql",
      query: "subscription { schemaJobs { operation } }",
    },
  });
  expect(created.status).toBe(201);
  webhookId = created.body.result.id;
});
afterAll(async () => {
  await dispatcherStore.close();
  await t.close();
});

const sweeper = (stepSize: number) =>
  createRetentionSweeper({
    store: t.store,
    log: createLogger("silent"),
    rules: RULES,
    everyMs: 60_000,
    stepSize,
    now: () => now,
  });

/**
 * A delivery created `createdDaysAgo`, whose one attempt (logged by the dispatcher's store)
 * left it `status` `changedDaysAgo`.
 */
async function delivery(
  id: string,
  createdDaysAgo: number,
  status: Exclude<DeliveryStatus, "delivering">,
  changedDaysAgo: number,
) {
  const createdAt = now - createdDaysAgo * DAY;
  const record: DeliveryRecord = {
    tenantId: acme.tenant.id,
    id,
    webhookId,
    eventId: `mutation-${id}`,
    part: 0,
    status: "pending",
    body: "[]",
    test: false,
    attempts: 0,
    committedAt: createdAt,
    createdAt,
    updatedAt: createdAt,
  };
  await t.store.unitOfWork((tx) => tx.insertDeliveries([record]));
  const attempt = {
    startedAt: now - changedDaysAgo * DAY,
    durationMs: 0,
    statusCode: status === "succeeded" ? 200 : 500,
    responseBody: "answer",
    error: null,
  };
  expect(await dispatcherStore.recordAttempt(acme.tenant.id, id, attempt, status)).toBe(1);
}

const listed = async () => {
  const answer = await t.call("GET", `/webhooks/${webhookId}/deliveries?limit=100`, {
    token: acme.adminToken,
  });
  expect(answer.status).toBe(200);
  return (answer.body.result as { id: string; status: string }[]).map((d) => d.id).sort();
};

const attemptRows = async (ids: string[]) => {
  const marks = ids.map((_, i) => `$${i + 1}`).join(", ");
  const [row] = await storeSql<{ n: number }>(
    t.storeEnv,
    `SELECT count(*) AS n FROM delivery_attempts WHERE delivery_id IN (${marks})`,
    ids,
  );
  return Number(row?.n);
};

// Its first test counts attempt rows with SQL, and the second follows on from the first.
describe.skipIf(!SQL_UNDER_PORT)("delivery log retention", () => {
  test("finished deliveries past the retention leave with their attempts; unfinished and recent ones stay", async () => {
    // Oldest first: more unfinished deliveries than one step looks at, ahead of the finished ones.
    await delivery("a-pending-1", 60, "pending", 60);
    await delivery("a-pending-2", 59, "pending", 59);
    await delivery("a-pending-3", 58, "pending", 58);
    await delivery("b-succeeded", 40, "succeeded", 40);
    await delivery("c-failed", 40, "failed", 31);
    await delivery("d-retried-lately", 40, "succeeded", 1);
    await delivery("e-recent", 29, "succeeded", 29);
    expect(await attemptRows(["b-succeeded", "c-failed"])).toBe(2);

    const result = await sweeper(2).sweep();

    expect(result.deliveries).toBe(2);
    expect(await listed()).toEqual([
      "a-pending-1",
      "a-pending-2",
      "a-pending-3",
      "d-retried-lately",
      "e-recent",
    ]);
    expect(await attemptRows(["b-succeeded", "c-failed"])).toBe(0);
    expect(await attemptRows(["a-pending-1", "d-retried-lately", "e-recent"])).toBe(3);
    const gone = await t.call("POST", `/webhooks/${webhookId}/deliveries/b-succeeded/retry`, {
      token: acme.adminToken,
    });
    expect(gone.status).toBe(404);
  });

  test("a second sweep finds nothing more to delete", async () => {
    expect(await sweeper(2).sweep()).toEqual({ deliveries: 0, changes: 0 });
    expect((await listed()).length).toBe(5);
  });
});

describe("change log retention", () => {
  const change = (uid: string, hoursAgo: number): ChangeEntry => ({
    tenantId: acme.tenant.id,
    objectName: "Jobs",
    operation: "INSERT",
    uid,
    before: null,
    after: { UID: uid },
    mutationId: `mutation-${uid}`,
    sequence: 0,
    committedAt: now - hoursAgo * HOUR,
  });
  // Every entry here is acme's: one partition of the log.
  const partition = () => partitionOf(t.store, acme.tenant.id);
  const read = (reader: StoreReader = t.store) => reader.readChanges(partition(), null, 100);
  const logged = async () => (await read()).entries.map((entry) => entry.uid);

  beforeAll(async () => {
    // Provisioning logged the administrator's Users record; these cases start from an empty log.
    const { next } = await read();
    await t.store.unitOfWork(async (tx) => {
      await tx.setFeedPosition("main", partition(), next, now);
      await tx.pruneChanges(now + DAY, 100);
    });
    expect(await logged()).toEqual([]);
  });

  test("entries the feed passed more than the retention ago are deleted; later or unread ones stay", async () => {
    const passed = [change("old-1", 50), change("old-2", 49), change("old-3", 48), change("recent", 2)];
    await t.store.unitOfWork((tx) => tx.appendChanges(passed));
    const { next: reached } = await read();
    await t.store.unitOfWork(async (tx) => {
      await tx.appendChanges([change("old-unread", 30)]);
      await tx.setFeedPosition("main", partition(), reached, now);
    });

    const result = await sweeper(2).sweep();

    expect(result.changes).toBe(3);
    expect(await logged()).toEqual(["recent", "old-unread"]);
  });

  test("an old entry committed after a recent one (another process's clock) waits behind it", async () => {
    await t.store.unitOfWork(async (tx) => {
      await tx.appendChanges([change("old-skewed", 40)]);
      await tx.setFeedPosition("main", partition(), (await read(tx)).next, now);
    });
    expect((await sweeper(10).sweep()).changes).toBe(0);
    expect(await logged()).toEqual(["recent", "old-unread", "old-skewed"]);
  });

  test("with a second feed reader behind, its unread entries stay", async () => {
    // Saved at the log's start: it has passed nothing.
    await t.store.unitOfWork((tx) => tx.setFeedPosition("other", partition(), null, now));
    await t.store.unitOfWork((tx) => tx.appendChanges([change("old-behind", 40)]));
    const behind = await sweeper(10).sweep();
    expect(behind.changes).toBe(0);
    expect(await logged()).toEqual(["recent", "old-unread", "old-skewed", "old-behind"]);
  });
});
