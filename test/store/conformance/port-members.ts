/**
 * Every member of the store port, by aggregate, taken from the interfaces:
 * each list must name exactly its aggregate's members (`satisfies`), and
 * together they must name every member of Store and StoreWriter, so a member
 * added to the port without a place here is a type error, and one the suite
 * never calls fails the coverage test.
 */
import type { CatalogueReader, CatalogueWriter } from "../../../api/store/ports/catalogue-port.ts";
import type { ChangeLogReader, ChangeLogWriter } from "../../../api/store/ports/change-log-port.ts";
import type { ConfigReader, ConfigWriter } from "../../../api/store/ports/config-port.ts";
import type { DeliveryLogReader, DeliveryLogWriter } from "../../../api/store/ports/delivery-log-port.ts";
import type { IdentityReader, IdentityWriter } from "../../../api/store/ports/identity-port.ts";
import type { RecordReader, RecordWriter } from "../../../api/store/ports/records-port.ts";
import type { RetentionWriter } from "../../../api/store/ports/retention-port.ts";
import type { WebhookReader, WebhookWriter } from "../../../api/store/ports/webhook-port.ts";
import type { Store, StoreWriter, UnitOfWorkPort } from "../../../api/store/store.ts";

type Members<T> = Record<keyof T, true>;

export const PORT_MEMBERS = {
  identity: {
    findTenantById: true,
    findTenantByName: true,
    listTenants: true,
    findUser: true,
    findUserByUsername: true,
    findToken: true,
    listTokens: true,
    insertTenant: true,
    insertUser: true,
    insertToken: true,
    revokeToken: true,
    exportUsers: true,
    exportTokens: true,
    revocationVersion: true,
  } satisfies Members<IdentityReader & IdentityWriter>,
  catalogue: {
    catalogueVersion: true,
    loadCustomDefinitions: true,
    ensureObjectStorage: true,
    createCustomObject: true,
    addCustomField: true,
    deleteCustomObject: true,
    deleteCustomField: true,
    setObjectTracked: true,
    bumpCatalogueVersion: true,
    exportCatalogue: true,
    importCatalogue: true,
  } satisfies Members<CatalogueReader & CatalogueWriter>,
  records: {
    findRecords: true,
    findRecordByValue: true,
    countReferencing: true,
    listRecords: true,
    countRecords: true,
    listRelated: true,
    readJson: true,
    insertRecord: true,
    insertUnlessTaken: true,
    updateRecord: true,
    deleteRecord: true,
    nextSequenceValue: true,
    exportSequences: true,
    importRecords: true,
    importSequences: true,
  } satisfies Members<RecordReader & RecordWriter>,
  changeLog: {
    feedPartitions: true,
    readChanges: true,
    feedPosition: true,
    changeLogLag: true,
    appendChanges: true,
    setFeedPosition: true,
    passedByAllReaders: true,
    importChanges: true,
  } satisfies Members<ChangeLogReader & ChangeLogWriter>,
  webhooks: {
    listWebhooks: true,
    webhookSetVersion: true,
    findWebhook: true,
    findWebhookByName: true,
    insertWebhook: true,
    replaceWebhook: true,
    rotateWebhookSecret: true,
    deleteWebhook: true,
  } satisfies Members<WebhookReader & WebhookWriter>,
  configVariables: {
    listConfigVariables: true,
    findConfigVariable: true,
    putConfigVariable: true,
    deleteConfigVariable: true,
  } satisfies Members<ConfigReader & ConfigWriter>,
  deliveryLog: {
    listDeliveries: true,
    findDelivery: true,
    listAttempts: true,
    insertDeliveries: true,
    resetDelivery: true,
    exportDeliveries: true,
    importDeliveries: true,
  } satisfies Members<DeliveryLogReader & DeliveryLogWriter>,
  retention: {
    pruneDeliveries: true,
    pruneChanges: true,
  } satisfies Members<RetentionWriter>,
  unitOfWork: {
    engine: true,
    unitOfWork: true,
    requestArrived: true,
    refreshReads: true,
    ping: true,
    onCommitted: true,
    close: true,
  } satisfies Members<UnitOfWorkPort>,
};

/**
 * Members an engine may leave out (`readJson`: the resolvers answer without it; `onCommitted`: the
 * change feed polls without it).
 */
export const OPTIONAL_PORT_MEMBERS: readonly (keyof (Store & StoreWriter))[] = ["readJson", "onCommitted"];

/** Every member of the port, each once. */
export const ALL_PORT_MEMBERS: Members<Store & StoreWriter> = {
  ...PORT_MEMBERS.identity,
  ...PORT_MEMBERS.catalogue,
  ...PORT_MEMBERS.records,
  ...PORT_MEMBERS.changeLog,
  ...PORT_MEMBERS.webhooks,
  ...PORT_MEMBERS.configVariables,
  ...PORT_MEMBERS.deliveryLog,
  ...PORT_MEMBERS.retention,
  ...PORT_MEMBERS.unitOfWork,
};
