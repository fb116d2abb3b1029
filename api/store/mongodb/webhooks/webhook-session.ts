/**
 * The webhook part of a MongoDB session: a tenant's webhook definitions
 * (`webhooks`) and their set's version (its `webhooks` counter), read and
 * written through the documents of webhook-mapping.ts and
 * common/store/mongodb/webhook-document.ts. Each write that changes a
 * webhook moves the set version in the same transaction (webhook-writes.ts),
 * as the dispatcher's disable does.
 */
import type { ClientSession, Db } from "mongodb";
import { ConflictError } from "../../../../common/errors.ts";
import { isDuplicateKeyOn } from "../../../../common/store/mongodb/driver-errors.ts";
import { COLLECTION, LAYOUT } from "../../../../common/store/mongodb/layout.ts";
import {
  type CounterDocument,
  type WebhookDocument,
  webhookFilter,
  webhookNameFilter,
  webhookSetCounter,
  webhookSetVersionOf,
} from "../../../../common/store/mongodb/webhook-document.ts";
import { bumpWebhookSetVersion } from "../../../../common/store/mongodb/webhook-writes.ts";
import type { WebhookReader, WebhookRecord, WebhookWriter } from "../../ports/webhook-port.ts";
import { MQL_COLLATION } from "../query/mql-layout.ts";
import {
  replaceWebhookUpdate,
  rotateSecretUpdate,
  toWebhook,
  WEBHOOK_LIST_SORT,
  webhookDocument,
} from "./webhook-mapping.ts";

/** The fields of the unique index that holds webhook names unique in a tenant (layout.ts, `webhook_name`). */
const NAME_INDEX_FIELDS = Object.keys(
  LAYOUT.find((c) => c.name === COLLECTION.webhooks)?.indexes.find((i) => i.name === "webhook_name")?.keys ??
    {},
);

/** A write that meets another webhook of the tenant by its name fails as the other engines word it. */
async function uniquely<T>(webhook: WebhookRecord, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isDuplicateKeyOn(error, NAME_INDEX_FIELDS))
      throw new ConflictError(`a webhook named '${webhook.name}' exists already`);
    throw error;
  }
}

/**
 * The webhook members on `db`, in the unit of work of `session` when given (reads outside one
 * pass none; writes need one, so that a webhook and its set version change together).
 */
export function createWebhookSession(db: Db, session: ClientSession | null): WebhookReader & WebhookWriter {
  const webhooks = db.collection<WebhookDocument>(COLLECTION.webhooks);
  const counters = db.collection<CounterDocument>(COLLECTION.counters);
  const inUnit = session ? { session } : {};
  // Strings compare by code point (ids in the list's order, exact ids, folded names), whatever the collection's default.
  const reads = { ...inUnit, collation: MQL_COLLATION };
  const unit = (member: string): ClientSession => {
    if (session === null) throw new Error(`${member} runs inside a unit of work`);
    return session;
  };
  const one = async (filter: ReturnType<typeof webhookFilter> | ReturnType<typeof webhookNameFilter>) => {
    const doc = await webhooks.findOne(filter, reads);
    return doc ? toWebhook(doc) : null;
  };

  return {
    listWebhooks: async (tenantId) =>
      (await webhooks.find({ t: tenantId }, reads).sort(WEBHOOK_LIST_SORT).toArray()).map(toWebhook),
    async webhookSetVersion(tenantId) {
      const counter = webhookSetCounter(tenantId);
      return webhookSetVersionOf(await counters.findOne(counter.filter, inUnit));
    },
    findWebhook: (tenantId, id) => one(webhookFilter(tenantId, id)),
    findWebhookByName: (tenantId, name) => one(webhookNameFilter(tenantId, name)),
    async insertWebhook(w) {
      const tx = unit("insertWebhook");
      await uniquely(w, () => webhooks.insertOne(webhookDocument(w), { session: tx }));
      await bumpWebhookSetVersion(db, tx, w.tenantId);
    },
    async replaceWebhook(w) {
      const tx = unit("replaceWebhook");
      const { matchedCount } = await uniquely(w, () =>
        webhooks.updateOne(webhookFilter(w.tenantId, w.id), replaceWebhookUpdate(w), { session: tx }),
      );
      if (matchedCount > 0) await bumpWebhookSetVersion(db, tx, w.tenantId);
    },
    async rotateWebhookSecret(tenantId, id, rotation) {
      const tx = unit("rotateWebhookSecret");
      const { matchedCount } = await webhooks.updateOne(
        webhookFilter(tenantId, id),
        rotateSecretUpdate(rotation),
        { session: tx },
      );
      if (matchedCount === 0) return false;
      await bumpWebhookSetVersion(db, tx, tenantId);
      return true;
    },
    async deleteWebhook(tenantId, id) {
      const tx = unit("deleteWebhook");
      const { deletedCount } = await webhooks.deleteOne(webhookFilter(tenantId, id), { session: tx });
      if (deletedCount === 0) return false;
      await bumpWebhookSetVersion(db, tx, tenantId);
      return true;
    },
  };
}
