/**
 * Values the conformance suite writes: tenants, users, tokens, and a small
 * catalogue of two custom objects (`Owners`, referencing itself, and `Things`,
 * with a field of every column type) beside the standard `Users`.
 */
import { parseOrderBy } from "../../../api/eql/parse-order-by.ts";
import type { Catalogue, FieldDef, ObjectDef } from "../../../api/model/catalogue.ts";
import { customMapping } from "../../../api/model/custom-mapping.ts";
import { type FieldSpec, makeField, systemFields } from "../../../api/model/field-factory.ts";
import type { ChangeEntry, RecordValues } from "../../../api/model/record-values.ts";
import { STANDARD_OBJECTS } from "../../../api/model/standard-objects.ts";
import type {
  ConfigVariable,
  Store,
  StoreReader,
  StoreWriter,
  Tenant,
  TokenRecord,
  User,
  WebhookRecord,
} from "../../../api/store/store.ts";

/** A plain-text config variable of `tenantId`, created and updated at `at`. */
export const configVariable = (tenantId: string, key: string, value: string, at = 1000): ConfigVariable => ({
  tenantId,
  key,
  configType: "plain-text",
  value,
  description: null,
  createdAt: at,
  updatedAt: at,
});

export const tenant = (name: string): Tenant => ({ id: crypto.randomUUID(), name, createdAt: Date.now() });

export const user = (tenantId: string, username: string): User => ({
  id: crypto.randomUUID(),
  tenantId,
  username,
  email: `${username}@example.invalid`,
  firstName: "Ada",
  lastName: "Lovelace",
  roles: ["scheduler"],
  isActive: true,
  createdAt: Date.now(),
});

export const token = (tenantId: string, userId: string): TokenRecord => ({
  jti: crypto.randomUUID(),
  tenantId,
  userId,
  roles: ["scheduler"],
  description: null,
  createdAt: Date.now(),
  expiresAt: null,
  revokedAt: null,
});

/** A webhook of `tenantId` (its secret as sealed text: the store keeps what it is given). */
export const webhook = (tenantId: string, name: string, createdAt = Date.now()): WebhookRecord => ({
  tenantId,
  id: crypto.randomUUID(),
  name,
  url: "https://receiver.example/hook",
  type: "graphql",
  options: null,
  query: "subscription { schemaThings { operation } }",
  headers: { "x-one": "1" },
  secret: "sealed:secret",
  previousSecret: null,
  previousSecretUntil: null,
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  enabledBy: null,
  enabledAt: null,
  version: 1,
  createdAt,
  updatedAt: createdAt,
});

export const USERS = STANDARD_OBJECTS.find((object) => object.name === "Users") as ObjectDef;

/** A custom object as the custom-objects REST defines one: system fields, then custom fields. */
export function customObject(name: string, fields: Record<string, FieldSpec>): ObjectDef {
  const id = crypto.randomUUID();
  return {
    id,
    name,
    label: name,
    description: null,
    mapping: customMapping(name),
    custom: true,
    tracked: true,
    fields: [
      ...systemFields(name, id),
      ...Object.entries(fields).map(([field, spec]) => customField(name, field, spec)),
    ],
  };
}

/** A custom field of `objectName`, stored as the custom-objects REST stores one (`__<lower-case name>`). */
export const customField = (objectName: string, name: string, spec: FieldSpec): FieldDef =>
  makeField(objectName, name, {
    id: crypto.randomUUID(),
    mapping: customMapping(name),
    custom: true,
    ...spec,
  });

const KINDS = ["Alpha", "beta", "Gamma"];
const TAGS = ["red", "Green", "blue sky"];

/** The suite's catalogue of a tenant: Users, Owners (a tree), Things (every column type). */
export function testCatalogue(tenantId: string): Catalogue & { owners: ObjectDef; things: ObjectDef } {
  const owners = customObject("Owners", {
    Name: { type: "string" },
    Code: { type: "string", unique: true },
    Score: { type: "int" },
    Parent: { type: "reference", referenceTo: "Owners", reverseName: "Children" },
  });
  const things = customObject("Things", {
    Name: { type: "string" },
    Note: { type: "textarea" },
    Link: { type: "url" },
    Count: { type: "int" },
    Minutes: { type: "duration" },
    Price: { type: "decimal", precision: 10, scale: 2 },
    Flag: { type: "boolean" },
    Day: { type: "date" },
    At: { type: "datetime" },
    Clock: { type: "time" },
    Kind: { type: "picklist", items: KINDS },
    Tags: { type: "multipicklist", items: TAGS },
    Owner: { type: "reference", referenceTo: "Owners", reverseName: "Things" },
  });
  return { tenantId, version: 1, objects: [USERS, owners, things], owners, things };
}

/**
 * Writes `user`'s record of the standard object Users (UID = user id, created by itself), as the
 * API's record engine would, straight through the port: the store's tests keep the change log theirs.
 */
export async function insertUserRecord(tx: StoreWriter, user: User): Promise<void> {
  await tx.insertRecord(user.tenantId, USERS, {
    ...newRecord(USERS, user.id, {}, user.createdAt),
    UID: user.id,
    FirstName: user.firstName,
    LastName: user.lastName,
    Email: user.email,
    IsActive: user.isActive,
    UserTypes: user.roles.map((role) => role[0]?.toUpperCase() + role.slice(1)),
  });
}

export interface SeededTenant {
  tenant: Tenant;
  user: User;
  catalogue: ReturnType<typeof testCatalogue>;
}

/** A tenant with a user (and its Users record) and the suite's custom objects, committed. */
export async function seedTenant(store: Store, name = "acme"): Promise<SeededTenant> {
  const created = tenant(name);
  const seeded = { tenant: created, user: user(created.id, "ada"), catalogue: testCatalogue(created.id) };
  await store.unitOfWork(async (tx) => {
    await tx.insertTenant(seeded.tenant);
    await tx.ensureObjectStorage(seeded.tenant.id, USERS);
    await tx.insertUser(seeded.user);
    await insertUserRecord(tx, seeded.user);
    await tx.createCustomObject(seeded.tenant.id, seeded.catalogue.owners);
    await tx.createCustomObject(seeded.tenant.id, seeded.catalogue.things);
  });
  return seeded;
}

/** The values of a new record of `object` by `user`: the system fields, then `values`. */
export function newRecord(
  object: ObjectDef,
  userId: string,
  values: RecordValues,
  at = Date.now(),
): RecordValues {
  const record: RecordValues = {};
  for (const field of object.fields) record[field.name] = null;
  return {
    ...record,
    UID: crypto.randomUUID(),
    CreatedDate: at,
    LastModifiedDate: at,
    CreatedBy: userId,
    LastModifiedBy: userId,
    ...values,
  };
}

/** Every record of `object`, by UID (an unfiltered list, one page). */
export async function listAll(
  store: StoreReader,
  catalogue: Catalogue,
  object: ObjectDef,
): Promise<RecordValues[]> {
  const order = parseOrderBy(null, object, catalogue);
  const page = await store.listRecords(catalogue.tenantId, object, {
    filter: null,
    order,
    after: null,
    offset: 0,
    limit: 1000,
    now: Date.now(),
  });
  return page.map((listed) => listed.values);
}

/** A change-log entry of `tenantId`'s mutation `mutationId`. */
export const changeEntry = (
  tenantId: string,
  mutationId: string,
  sequence: number,
  committedAt = Date.now(),
): ChangeEntry => ({
  tenantId,
  objectName: "Things",
  operation: "INSERT",
  uid: crypto.randomUUID(),
  before: null,
  after: { Name: `${mutationId}/${sequence}` },
  mutationId,
  sequence,
  committedAt,
});
