/**
 * Copying a whole store into another, of any engine (`npm run admin -- copy-store`): a source
 * and a target store in, the counts of what was copied out. Everything goes through the store
 * port, so an engine that implements it can be copied from and to.
 *
 * What is copied, per tenant: the tenant, its users and tokens (revocations kept), its custom
 * definitions (ids, creation times, tracking, catalogue version), every record of every object
 * as stored (UIDs, system fields, generated names) and the sequences behind generated names, its
 * webhooks (secrets still sealed, state, options, versions), its config variables (secret values
 * still sealed: nothing is opened, so no key is needed here), and its delivery log with every
 * attempt. Of the change log, only each partition's tail the source's feed readers have not all
 * passed: those changes were committed but not yet handed to every consumer (webhooks, deferred
 * firings), so the target's feed, which starts at its log's start, hands them on; what was handed
 * on already is not copied and never delivered twice. Feed cursors are the engine's own and are
 * not copied.
 *
 * The whole copy is one unit of work on the target: it commits whole, or leaves the target as it
 * was (a failure halfway, or a source that changed meanwhile, writes nothing). Reads of the source
 * go a page at a time, so no table is held in memory whole. The source must be idle (no API
 * process or dispatcher on it): a change committed to it during the copy is noticed (its change
 * log moved) and undoes the copy. The one write to the source is what an API process does as it
 * starts: its tenants' standard objects' storage brought up to date (a store last opened by an
 * older version may lack a column a standard object has gained), so every field can be read.
 */
import { ConflictError } from "../../common/errors.ts";
import { parseOrderBy } from "../eql/parse-order-by.ts";
import { assembleCatalogue } from "../model/assemble-catalogue.ts";
import type { ObjectDef } from "../model/catalogue.ts";
import type { FeedCursor } from "../model/record-values.ts";
import { STANDARD_OBJECTS } from "../model/standard-objects.ts";
import type { Store, StoreWriter, Tenant } from "../store/store.ts";

/** How many of each kind were copied. */
export interface CopyCounts {
  tenants: number;
  users: number;
  tokens: number;
  customObjects: number;
  customFields: number;
  /** Records of every object, and by object name. */
  records: number;
  recordsByObject: Record<string, number>;
  sequences: number;
  webhooks: number;
  configVariables: number;
  secretConfigVariables: number;
  deliveries: number;
  deliveryAttempts: number;
  /** Change-log entries not yet handed on by the source's feed, which the target's feed hands on. */
  changes: number;
}

export interface CopyOptions {
  /** Copy into a target that holds tenants already (none of the source's). Default false: refused. */
  intoNonEmpty?: boolean;
  /** Rows read from the source (and written to the target) at a time. Default 500. */
  pageSize?: number;
  /** Called after each page, with the counts so far and what is being copied (`acme: Jobs`). */
  onProgress?: (counts: Readonly<CopyCounts>, stage: string) => void;
}

const DEFAULT_PAGE_SIZE = 500;

const noCounts = (): CopyCounts => ({
  tenants: 0,
  users: 0,
  tokens: 0,
  customObjects: 0,
  customFields: 0,
  records: 0,
  recordsByObject: {},
  sequences: 0,
  webhooks: 0,
  configVariables: 0,
  secretConfigVariables: 0,
  deliveries: 0,
  deliveryAttempts: 0,
  changes: 0,
});

/**
 * Copies everything `source` holds into `target` in one unit of work of the target's.
 * @throws ConflictError when the target holds tenants (unless `intoNonEmpty`), holds one of the
 * source's tenants (by id or name), or the source changed during the copy; the error of a failed
 * read or write otherwise, its message prefixed with what was being copied. The target is left as
 * it was whenever it throws.
 */
export async function copyStore(
  source: Store,
  target: Store,
  options: CopyOptions = {},
): Promise<CopyCounts> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const progress = options.onProgress ?? (() => undefined);
  const tenants = await source.listTenants();
  await source.unitOfWork(async (tx) => {
    for (const tenant of tenants)
      for (const object of STANDARD_OBJECTS) await tx.ensureObjectStorage(tenant.id, object);
  });
  source.refreshReads();
  // The source's log and the target's may be kept in different numbers of partitions: each entry
  // goes to its tenant's partition of the target (importChanges), so a tenant's order is kept.
  const partitions = Array.from({ length: source.feedPartitions() }, (_, p) => p);
  const tailStarts = await Promise.all(partitions.map((p) => source.passedByAllReaders(p)));
  return target.unitOfWork(async (tx) => {
    // Built in the unit of work: an engine may run it again, from nothing.
    const counts = noCounts();
    const copying = { counts, pageSize, progress };
    await assertRoomFor(tx, tenants, options.intoNonEmpty ?? false);
    const tailEnds: (FeedCursor | null)[] = [];
    for (const p of partitions)
      tailEnds[p] = await copyChanges(source, tx, p, tailStarts[p] ?? null, copying);
    for (const tenant of tenants) await copyTenant(source, tx, tenant, copying);
    // Every write to the source appends to its change log: one after the tail was read means the
    // records (or others) copied may be older or newer than that change.
    let moved = 0;
    for (const p of partitions) moved += (await source.changeLogLag(p, tailEnds[p] ?? null)).changes;
    if (moved > 0)
      throw new ConflictError(
        `the source store changed during the copy (${counted(moved, "change")} committed meanwhile): stop every API process and dispatcher on it, then run copy-store again; nothing was written to the target`,
      );
    return counts;
  });
}

/** @throws ConflictError when the target may not take the source's tenants. */
async function assertRoomFor(tx: StoreWriter, tenants: readonly Tenant[], intoNonEmpty: boolean) {
  const present = await tx.listTenants();
  if (present.length > 0 && !intoNonEmpty)
    throw new ConflictError(
      `the target store is not empty (${counted(present.length, "tenant")}: ${names(present)}); copy into an empty store, or pass --into-non-empty to add the source's tenants beside them`,
    );
  const taken = tenants.filter((tenant) =>
    present.some((p) => p.id === tenant.id || p.name.toLowerCase() === tenant.name.toLowerCase()),
  );
  if (taken.length > 0)
    throw new ConflictError(`the target store holds tenants of the source already: ${names(taken)}`);
}

const names = (tenants: readonly Tenant[]) => tenants.map((tenant) => tenant.name).join(", ");
const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

interface Copying {
  counts: CopyCounts;
  pageSize: number;
  progress: (counts: Readonly<CopyCounts>, stage: string) => void;
}

/** Copies the source's change log, in `partition`, after `from` to its end; returns the cursor of its end. */
async function copyChanges(
  source: Store,
  tx: StoreWriter,
  partition: number,
  from: FeedCursor | null,
  { counts, pageSize, progress }: Copying,
): Promise<FeedCursor | null> {
  let cursor = from;
  for (;;) {
    const page = await source.readChanges(partition, cursor, pageSize);
    if (page.entries.length === 0) return cursor;
    await tx.importChanges(page.entries.map(({ cursor: _, ...entry }) => entry));
    counts.changes += page.entries.length;
    cursor = page.next;
    progress(counts, "change log");
  }
}

/** Copies one tenant and everything that is its. */
async function copyTenant(source: Store, tx: StoreWriter, tenant: Tenant, copying: Copying): Promise<void> {
  const { counts, pageSize, progress } = copying;
  const id = tenant.id;
  const step = async (stage: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      throw during(`tenant ${tenant.name}, ${stage}`, error);
    }
    progress(counts, `${tenant.name}: ${stage}`);
  };

  await step("tenant", async () => {
    await tx.insertTenant(tenant);
    counts.tenants++;
  });
  const exported = await source.exportCatalogue(id);
  await step("custom definitions", async () => {
    await tx.importCatalogue(id, exported);
    counts.customObjects += exported.objects.length;
    counts.customFields += exported.fields.length;
  });
  const catalogue = assembleCatalogue(id, {
    version: exported.version,
    objects: exported.objects.map((saved) => saved.object),
    fields: exported.fields.map((saved) => saved.field),
  });
  for (const object of catalogue.objects)
    await step(`storage of ${object.name}`, () => tx.ensureObjectStorage(id, object));

  await pages(
    pageSize,
    (after) => source.exportUsers(id, after, pageSize),
    (user) => user.id,
    async (users) => {
      await step("users", async () => {
        for (const user of users) await tx.insertUser(user);
        counts.users += users.length;
      });
    },
  );
  await pages(
    pageSize,
    (after) => source.exportTokens(id, after, pageSize),
    (token) => token.jti,
    async (tokens) => {
      await step("tokens", async () => {
        for (const token of tokens) await tx.insertToken(token);
        counts.tokens += tokens.length;
      });
    },
  );
  for (const object of catalogue.objects)
    await copyRecords(source, tx, tenant, object, catalogue, copying, step);
  const sequences = await source.exportSequences(id);
  await step("sequences", async () => {
    await tx.importSequences(id, sequences);
    counts.sequences += sequences.length;
  });
  const webhooks = await source.listWebhooks(id);
  await step("webhooks", async () => {
    for (const webhook of webhooks) await tx.insertWebhook(webhook);
    counts.webhooks += webhooks.length;
  });
  const variables = await source.listConfigVariables(id);
  await step("config variables", async () => {
    for (const variable of variables) await tx.putConfigVariable(variable);
    counts.configVariables += variables.length;
    counts.secretConfigVariables += variables.filter((v) => v.configType === "secret").length;
  });
  await pages(
    pageSize,
    (after) => source.exportDeliveries(id, after, pageSize),
    (exported) => exported.delivery.id,
    async (deliveries) => {
      await step("delivery log", async () => {
        await tx.importDeliveries(deliveries);
        counts.deliveries += deliveries.length;
        counts.deliveryAttempts += deliveries.reduce((sum, d) => sum + d.attempts.length, 0);
      });
    },
  );
}

/** Copies the records of one object, a page at a time in UID order. */
async function copyRecords(
  source: Store,
  tx: StoreWriter,
  tenant: Tenant,
  object: ObjectDef,
  catalogue: ReturnType<typeof assembleCatalogue>,
  { counts, pageSize }: Copying,
  step: (stage: string, work: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const order = parseOrderBy(null, object, catalogue);
  let after: (string | number | null)[] | null = null;
  for (;;) {
    const page = await source.listRecords(tenant.id, object, {
      filter: null,
      order,
      after,
      offset: 0,
      limit: pageSize,
      now: Date.now(),
    });
    if (page.length === 0) return;
    await step(object.name, async () => {
      await tx.importRecords(
        tenant.id,
        object,
        page.map((listed) => listed.values),
      );
      counts.records += page.length;
      counts.recordsByObject[object.name] = (counts.recordsByObject[object.name] ?? 0) + page.length;
    });
    if (page.length < pageSize) return;
    after = page[page.length - 1]?.sortKey ?? null;
  }
}

/** Reads pages keyed by `keyOf` (each after the last one's key) until a short one, handing each on. */
async function pages<T>(
  pageSize: number,
  read: (after: string | null) => Promise<T[]>,
  keyOf: (item: T) => string,
  take: (page: T[]) => Promise<void>,
): Promise<void> {
  let after: string | null = null;
  for (;;) {
    const page = await read(after);
    if (page.length > 0) await take(page);
    if (page.length < pageSize) return;
    after = keyOf(page[page.length - 1] as T);
  }
}

/** `error` with what was being copied put before its message (its kind, code and details kept). */
function during(stage: string, error: unknown): unknown {
  if (error instanceof Error) error.message = `${stage}: ${error.message}`;
  return error;
}
