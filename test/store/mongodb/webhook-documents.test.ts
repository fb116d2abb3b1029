/**
 * The MongoDB engine's webhooks, pure (api/store/mongodb/webhooks/webhook-mapping.ts,
 * common/store/mongodb/webhook-document.ts): a webhook as a document and back
 * through the driver's BSON, and the filters, sorts and updates of the API's
 * members and of the dispatcher's disable, run by mingo over documents of the
 * engine's shape. No MongoDB server can run here, so mingo stands in for one
 * (mingo-collection.ts); what needs a server (the unique index, transactions,
 * write conflicts between concurrent writers) is the conformance suite's
 * (MONGODB_TEST_URL).
 */

import { describe, expect, test } from "bun:test";
import { MongoServerError } from "mongodb";
import {
  replaceWebhookUpdate,
  rotateSecretUpdate,
  toWebhook,
  WEBHOOK_LIST_SORT,
  webhookDocument,
} from "../../../api/store/mongodb/webhooks/webhook-mapping.ts";
import type { WebhookRecord } from "../../../api/store/ports/webhook-port.ts";
import { isDuplicateKeyOn } from "../../../common/store/mongodb/driver-errors.ts";
import { foldAsciiCase } from "../../../common/store/mongodb/fold-ascii-case.ts";
import { COLLECTION, LAYOUT } from "../../../common/store/mongodb/layout.ts";
import {
  DELIVERY_WEBHOOK_PROJECTION,
  disableWebhookUpdate,
  toDeliveryWebhook,
  type WebhookDocument,
  webhookFilter,
  webhookNameFilter,
  webhookSetCounter,
  webhookSetVersionOf,
} from "../../../common/store/mongodb/webhook-document.ts";
import { webhook } from "../conformance/fixtures.ts";
import { MingoCollection, throughBson } from "./mingo-collection.ts";

const A = "tenant-a";
const B = "tenant-b";

const deferred = (tenantId: string, name: string, createdAt: number): WebhookRecord => ({
  ...webhook(tenantId, name, createdAt),
  type: "graphql_deferred",
  query: "subscription { things { UID } }",
  options: { field: "Due", offset: { field: "Lead", default: 60_000 }, filter: "Name != 'x'" },
});
const scheduled = (tenantId: string, name: string, createdAt: number): WebhookRecord => ({
  ...webhook(tenantId, name, createdAt),
  type: "scheduled",
  query: "",
  options: { cron: "*/5 * * * *" },
});

/** A webhook stored and read back as the engine does: its document through BSON, mapped back. */
const roundTrip = (w: WebhookRecord) => toWebhook(throughBson(webhookDocument(w)) as WebhookDocument);

const webhooksOf = (...hooks: WebhookRecord[]) => new MingoCollection(hooks.map(webhookDocument));
const read = (docs: MingoCollection, tenantId: string, id: string) => {
  const doc = docs.findOne(webhookFilter(tenantId, id));
  return doc ? toWebhook(doc as WebhookDocument) : null;
};

describe("a webhook as a document and back", () => {
  test("every kind, every field, through BSON: the same webhook (times beyond 32 bits, nulls, previous secret)", () => {
    const rotated: WebhookRecord = {
      ...webhook(A, "Rotated", 1_764_000_000_000),
      previousSecret: "sealed:old",
      previousSecretUntil: 1_764_000_900_000,
      enabled: false,
      disabledReason: "410 Gone",
      disabledAt: 1_764_000_100_000,
      enabledBy: "user-1",
      enabledAt: 1_764_000_200_000,
      version: 7,
    };
    for (const w of [
      webhook(A, "Plain", 1000),
      deferred(A, "Later", 2000),
      scheduled(A, "Tick", 3000),
      rotated,
    ])
      expect(roundTrip(w)).toStrictEqual(w);
  });

  test("optional option keys left undefined read back absent, not null (the driver stores undefined as null)", () => {
    expect(throughBson<Record<string, unknown>>({ filter: undefined })).toEqual({ filter: null });
    const w: WebhookRecord = {
      ...deferred(A, "Sparse", 1000),
      options: { field: "Due", offset: { field: "Lead", default: undefined }, filter: undefined },
    };
    expect(roundTrip(w).options).toStrictEqual({ field: "Due", offset: { field: "Lead" } });
    const fixed = { ...w, options: { field: "Due", offset: 5000, filter: undefined } };
    expect(roundTrip(fixed).options).toStrictEqual({ field: "Due", offset: 5000 });
  });

  test("headers whose names hold '.' or start with '$' are values, not field names, and keep their order", () => {
    const headers = { "x.trace": "1", $weird: "2", "X-Api-Key": "3", "a-b": "4" };
    const w = { ...webhook(A, "Headers", 1000), headers };
    const doc = webhookDocument(w);
    expect(doc.headers).toEqual([
      { name: "x.trace", value: "1" },
      { name: "$weird", value: "2" },
      { name: "X-Api-Key", value: "3" },
      { name: "a-b", value: "4" },
    ]);
    // No field name of the stored document holds a dot or starts with '$', however the headers are named.
    const names: string[] = [];
    const walk = (value: unknown): void => {
      if (value === null || typeof value !== "object") return;
      for (const [key, inner] of Object.entries(value)) {
        if (!Array.isArray(value)) names.push(key);
        walk(inner);
      }
    };
    walk(replaceWebhookUpdate(w).$set);
    walk(doc);
    expect(names.filter((name) => name.includes(".") || name.startsWith("$"))).toEqual([]);
    expect(Object.keys(roundTrip(w).headers)).toEqual(Object.keys(headers));
    expect(roundTrip(w).headers).toEqual(headers);
  });

  test("the name's key folds ASCII letters only (as SQLite's NOCASE): 'Orders' and 'oRDERS' share it, 'É' and 'é' do not", () => {
    expect(foldAsciiCase("Orders")).toBe(foldAsciiCase("oRDERS"));
    expect(foldAsciiCase("Orders-2 [X]")).toBe("orders-2 [x]");
    expect(foldAsciiCase("É")).not.toBe(foldAsciiCase("é"));
    expect(webhookDocument(webhook(A, "Orders")).nameKey).toBe(webhookDocument(webhook(A, "ORDERS")).nameKey);
  });
});

describe("reads: the tenant's webhooks only", () => {
  test("listed oldest first, ties by id in code-point order; another tenant's never listed", () => {
    const tie1 = { ...webhook(A, "Tie one", 2000), id: "b-id" };
    const tie2 = { ...webhook(A, "Tie two", 2000), id: "B-id" };
    const first = webhook(A, "First", 1000);
    const late = webhook(A, "Late", 3000);
    const other = webhook(B, "Elsewhere", 500);
    const docs = webhooksOf(late, tie1, other, first, tie2);
    const listed = docs
      .find({ t: A }, { sort: WEBHOOK_LIST_SORT })
      .map((d) => toWebhook(d as WebhookDocument));
    expect(listed).toEqual([first, tie2, tie1, late]);
    expect(docs.find({ t: "tenant-c" }, { sort: WEBHOOK_LIST_SORT })).toEqual([]);
  });

  test("by id: the tenant's webhook, never another tenant's with that id", () => {
    const hook = webhook(A, "Mine", 1000);
    const docs = webhooksOf(hook, webhook(B, "Theirs", 1000));
    expect(read(docs, A, hook.id)).toEqual(hook);
    expect(read(docs, B, hook.id)).toBeNull();
    expect(read(docs, A, "no such id")).toBeNull();
  });

  test("by name without regard to ASCII case, within the tenant only", () => {
    const hook = webhook(A, "First", 1000);
    const docs = webhooksOf(hook, webhook(A, "Firsts", 1000), webhook(B, "FIRST", 1000));
    const byName = (tenantId: string, name: string) =>
      docs.find(webhookNameFilter(tenantId, name)).map((d) => (d as WebhookDocument)._id);
    expect(byName(A, "fIRST")).toEqual([hook.id]);
    expect(byName(A, "first ")).toEqual([]);
    expect(byName("tenant-c", "First")).toEqual([]);
  });
});

describe("writes", () => {
  test("replace: the definition as given, nameKey following the name, the version moved on; secrets, id, tenant and creation time as stored", () => {
    const first = webhook(A, "First", 1000);
    const docs = webhooksOf(first, webhook(B, "First", 1000));
    const replaced: WebhookRecord = {
      ...first,
      tenantId: "ignored",
      name: "Renamed",
      url: "https://elsewhere.example/",
      query: "subscription { schemaOwners { operation } }",
      headers: { "x-two": "2" },
      secret: "not replaced",
      previousSecret: "not replaced either",
      previousSecretUntil: 1,
      enabled: false,
      disabledReason: "410 Gone",
      disabledAt: 2500,
      enabledBy: "user-1",
      enabledAt: 2600,
      version: 99,
      createdAt: 1,
      updatedAt: 3000,
    };
    const { matchedCount } = docs.updateOne(webhookFilter(A, first.id), replaceWebhookUpdate(replaced));
    expect(matchedCount).toBe(1);
    expect(read(docs, A, first.id)).toEqual({
      ...replaced,
      tenantId: A,
      secret: first.secret,
      previousSecret: null,
      previousSecretUntil: null,
      createdAt: first.createdAt,
      version: first.version + 1,
    });
    expect(docs.findOne(webhookFilter(A, first.id))?.nameKey).toBe("renamed");
    // The other tenant's webhook of that name is untouched, and a missing id matches nothing.
    expect(docs.find({ t: B })[0]).toMatchObject({ name: "First", version: 1 });
    expect(docs.updateOne(webhookFilter(B, first.id), replaceWebhookUpdate(replaced)).matchedCount).toBe(0);
    expect(docs.updateOne(webhookFilter(A, "missing"), replaceWebhookUpdate(replaced)).matchedCount).toBe(0);
  });

  test("replace into another kind: the options follow (null for graphql), the version grows by one each time", () => {
    const later = deferred(A, "Deferred", 1000);
    const tick = scheduled(A, "Scheduled", 2000);
    const docs = webhooksOf(later, tick);
    const nowGraphql = { ...later, type: "graphql" as const, options: null, updatedAt: 3000 };
    const nowDeferred = { ...tick, ...later, id: tick.id, name: "Scheduled", updatedAt: 3000 };
    docs.updateOne(webhookFilter(A, later.id), replaceWebhookUpdate(nowGraphql));
    docs.updateOne(webhookFilter(A, tick.id), replaceWebhookUpdate(nowDeferred));
    expect(read(docs, A, later.id)).toStrictEqual({ ...nowGraphql, version: 2 });
    expect(read(docs, A, tick.id)).toStrictEqual({ ...nowDeferred, createdAt: tick.createdAt, version: 2 });
  });

  test("rotation: the new secret, the previous one and its end, updatedAt; the version moved on; another tenant's: no match", () => {
    const hook = webhook(A, "Rotated", 1000);
    const docs = webhooksOf(hook);
    const rotation = {
      secret: "sealed:new",
      previousSecret: hook.secret,
      previousSecretUntil: 9000,
      at: 2000,
    };
    expect(docs.updateOne(webhookFilter(B, hook.id), rotateSecretUpdate(rotation)).matchedCount).toBe(0);
    expect(docs.updateOne(webhookFilter(A, hook.id), rotateSecretUpdate(rotation)).matchedCount).toBe(1);
    expect(read(docs, A, hook.id)).toEqual({
      ...hook,
      secret: "sealed:new",
      previousSecret: hook.secret,
      previousSecretUntil: 9000,
      version: hook.version + 1,
      updatedAt: 2000,
    });
  });

  test("delete: the tenant's webhook only", () => {
    const hook = webhook(A, "Doomed", 1000);
    const docs = webhooksOf(hook);
    expect(docs.deleteOne(webhookFilter(B, hook.id)).deletedCount).toBe(0);
    expect(docs.deleteOne(webhookFilter(A, hook.id)).deletedCount).toBe(1);
    expect(docs.deleteOne(webhookFilter(A, hook.id)).deletedCount).toBe(0);
    expect(docs.all()).toEqual([]);
  });

  test("a taken name: the duplicate key the server reports on webhook_name is recognised as that index's, others are not", () => {
    const index = LAYOUT.find((c) => c.name === COLLECTION.webhooks)?.indexes.find(
      (i) => i.name === "webhook_name",
    );
    expect(index).toMatchObject({ keys: { t: 1, nameKey: 1 }, unique: true });
    const fields = Object.keys(index?.keys ?? {});
    const duplicate = (keyPattern?: Record<string, number>) =>
      new MongoServerError({ message: "E11000 duplicate key error (scripted)", code: 11000, keyPattern });
    expect(isDuplicateKeyOn(duplicate({ t: 1, nameKey: 1 }), fields)).toBe(true);
    expect(isDuplicateKeyOn(duplicate({ _id: 1 }), fields)).toBe(false);
    expect(isDuplicateKeyOn(duplicate(), fields)).toBe(false);
    expect(isDuplicateKeyOn(duplicate(), [])).toBe(false);
    expect(isDuplicateKeyOn(new Error("E11000"), fields)).toBe(false);
    // The index key of two names differing only in ASCII case is one key within a tenant, two across tenants.
    const key = (w: WebhookRecord) => {
      const doc = webhookDocument(w);
      return JSON.stringify([doc.t, doc.nameKey]);
    };
    expect(key(webhook(A, "Orders"))).toBe(key(webhook(A, "oRDERS")));
    expect(key(webhook(A, "Orders"))).not.toBe(key(webhook(B, "Orders")));
  });
});

describe("the dispatcher's view", () => {
  test("a delivery's webhook read through its projection: what the dispatcher signs and sends with, nothing else needed", () => {
    const hook: WebhookRecord = {
      ...webhook(A, "Sent", 1000),
      headers: { "x.one": "1", "X-Two": "2" },
      previousSecret: "sealed:old",
      previousSecretUntil: 5000,
    };
    const docs = webhooksOf(hook);
    const doc = docs.findOne(webhookFilter(A, hook.id), { projection: DELIVERY_WEBHOOK_PROJECTION });
    expect(toDeliveryWebhook(doc as WebhookDocument)).toStrictEqual({
      tenantId: A,
      id: hook.id,
      url: hook.url,
      headers: { "x.one": "1", "X-Two": "2" },
      sealedSecret: hook.secret,
      previousSealedSecret: "sealed:old",
      previousSecretUntil: 5000,
      enabled: true,
      disabledReason: null,
      version: 1,
    });
  });

  test("disable: not enabled, the reason and when, updatedAt, the version moved on; another tenant's or a missing webhook: no match", () => {
    const hook = webhook(A, "Gone", 1000);
    const docs = webhooksOf(hook);
    expect(
      docs.updateOne(webhookFilter(B, hook.id), disableWebhookUpdate("410 Gone", 6000)).matchedCount,
    ).toBe(0);
    expect(
      docs.updateOne(webhookFilter(A, "missing"), disableWebhookUpdate("410 Gone", 6000)).matchedCount,
    ).toBe(0);
    expect(
      docs.updateOne(webhookFilter(A, hook.id), disableWebhookUpdate("410 Gone", 5000)).matchedCount,
    ).toBe(1);
    expect(read(docs, A, hook.id)).toEqual({
      ...hook,
      enabled: false,
      disabledReason: "410 Gone",
      disabledAt: 5000,
      version: hook.version + 1,
      updatedAt: 5000,
    });
    const delivered = toDeliveryWebhook(docs.findOne(webhookFilter(A, hook.id)) as WebhookDocument);
    expect(delivered).toMatchObject({ enabled: false, disabledReason: "410 Gone", version: 2 });
  });
});

describe("the webhook set version", () => {
  test("0 before the first write; each bump moves the tenant's own counter on by one, from 1", () => {
    const counters = new MingoCollection();
    const version = (tenantId: string) =>
      webhookSetVersionOf(counters.findOne(webhookSetCounter(tenantId).filter) as { n: number } | null);
    const bump = (tenantId: string) => {
      const counter = webhookSetCounter(tenantId);
      expect(counter.collection).toBe(COLLECTION.counters);
      counters.updateOne(counter.filter, counter.update, { upsert: counter.upsert });
    };
    expect(version(A)).toBe(0);
    bump(A);
    expect(version(A)).toBe(1);
    bump(A);
    bump(A);
    expect(version(A)).toBe(3);
    expect(version(B)).toBe(0);
    bump(B);
    expect([version(A), version(B)]).toEqual([3, 1]);
    // One document per tenant, keyed as layout.ts says: {_id: {t, k: "webhooks"}, n}.
    expect(counters.all()).toEqual([
      { _id: { t: A, k: "webhooks" }, n: 3 },
      { _id: { t: B, k: "webhooks" }, n: 1 },
    ]);
  });
});
