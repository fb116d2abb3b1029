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
export type { WebhookRecord } from "./ports/webhook-port.ts";

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
  readonly engine: "sqlite" | "mongodb";
  /**
   * Runs `work` in one transaction: everything it writes commits together when
   * it resolves, and nothing is kept when it throws (the error is rethrown).
   * Units of work never interleave their writes.
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
  /** Waits for the units of work under way, then releases the engine's connections. */
  close(): Promise<void>;
}

export interface Store extends StoreReader, UnitOfWorkPort {}
