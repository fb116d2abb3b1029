/**
 * The store port: everything the API keeps, behind one interface that each
 * engine (SQLite now; PostgreSQL and MongoDB to be added beside it) implements.
 * It is split by aggregate, one file each under ports/ (identity, catalogue,
 * records, change log, webhooks, config variables, delivery log, retention),
 * and composed here: `StoreReader` is every aggregate's reads, `StoreWriter`
 * adds their writes (only inside a unit of work), `Store` adds the unit of
 * work and the engine's lifecycle. Every method is scoped by tenant where data
 * belongs to one. Methods are async so an engine over the network fits the
 * same shape. The conformance suite (test/store/) holds every engine to it.
 */

import type { CatalogueReader, CatalogueWriter } from "./ports/catalogue-port.ts";
import type { ChangeLogReader, ChangeLogWriter } from "./ports/change-log-port.ts";
import type { ConfigReader, ConfigWriter } from "./ports/config-port.ts";
import type { DeliveryLogReader, DeliveryLogWriter } from "./ports/delivery-log-port.ts";
import type { IdentityReader, IdentityWriter } from "./ports/identity-port.ts";
import type { RecordReader, RecordWriter } from "./ports/records-port.ts";
import type { RetentionWriter } from "./ports/retention-port.ts";
import type { WebhookReader, WebhookWriter } from "./ports/webhook-port.ts";

// The aggregates' shapes, under the names callers have always imported from here.
export { CONFIG_TYPES, type ConfigVariable } from "./ports/config-port.ts";
export {
  DELIVERY_STATUSES,
  type DeliveryAttempt,
  type DeliveryQuery,
  type DeliveryRecord,
  type DeliveryStatus,
} from "./ports/delivery-log-port.ts";
export { ROLES, type Role, type Tenant, type TokenRecord, type User } from "./ports/identity-port.ts";
export {
  type JoinedLookup,
  type ListedRecord,
  LOOKUPS,
  type WithLookups,
} from "./ports/records-port.ts";
export type { DeliveryAge, DeliveryPruneStep } from "./ports/retention-port.ts";
export type {
  DeferredOffset,
  DeferredOptions,
  WebhookKind,
  WebhookRecord,
} from "./ports/webhook-port.ts";

/** Reads, usable inside and outside a unit of work. */
export interface StoreReader
  extends IdentityReader,
    CatalogueReader,
    RecordReader,
    ChangeLogReader,
    WebhookReader,
    ConfigReader,
    DeliveryLogReader {}

/** Writes; only available inside a unit of work, so they commit or roll back together. */
export interface StoreWriter
  extends StoreReader,
    IdentityWriter,
    CatalogueWriter,
    RecordWriter,
    ChangeLogWriter,
    WebhookWriter,
    ConfigWriter,
    DeliveryLogWriter,
    RetentionWriter {}

/** The unit of work and the engine's lifecycle. */
export interface UnitOfWorkPort {
  /**
   * The engine's name, as configuration and `TEST_STORE` name it (`sqlite`; `postgres` and
   * `mongodb` to come): text, so that an engine is added without changing the port.
   */
  readonly engine: string;
  /**
   * Runs `work` as one serializable transaction and resolves to what it returned, once committed:
   * everything it wrote commits together, and nothing is kept when it throws (the error is
   * rethrown as thrown).
   *
   * Serializable: the units of work that commit have the outcome they would have had one at a
   * time, in some order. So a check and the write it allows, made in one unit of work (a unique
   * value looked up then inserted, a reference counted then its target deleted, the catalogue
   * read then changed), hold against every concurrent unit of work: the engine serializes them,
   * or fails one and runs it again.
   *
   * May be re-run: to get there an engine may call `work` more than once, each time with a fresh
   * `tx` and nothing of the earlier runs kept (a serialization failure, a transient error). So
   * `work` builds all its state inside the closure, reads only through `tx`, and has no effect
   * outside its transaction: no jobs queued, caches filled, requests sent or variables outside
   * it changed; those belong after the unit of work resolves. `work` never starts another unit
   * of work (it passes `tx` on instead). An engine that runs units of work one at a time (SQLite)
   * runs each once.
   *
   * Reads outside the unit of work never see its writes before it commits.
   */
  unitOfWork<T>(work: (tx: StoreWriter) => Promise<T>): Promise<T>;
  /**
   * Says a request has just arrived. Reads may share a snapshot for a while
   * (SQLite: one turn of the event loop); from this call on, the reads made
   * for the request see every commit that finished before it arrived.
   */
  requestArrived(): void;
  /** Reads from this call on see every commit that finished before it (for readers outside requests). */
  refreshReads(): void;
  /** True when the engine answers a trivial query. */
  ping(): Promise<boolean>;
  /**
   * Calls `listener` with the partition soon after any process commits a unit of work that appended
   * to that partition of the change log (a hint: it may come late, twice or, while the engine's
   * connection is down, not at all, so the partition's reader polls too). Engines that cannot hear
   * other processes' commits leave it out (SQLite). Returns what removes the listener.
   */
  onCommitted?(listener: (partition: number) => void): () => void;
  /** Waits for the units of work under way, then releases the engine's connections. */
  close(): Promise<void>;
}

export interface Store extends StoreReader, UnitOfWorkPort {}
