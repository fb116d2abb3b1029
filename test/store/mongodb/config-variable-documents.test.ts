/**
 * The MongoDB engine's config variables, pure (api/store/mongodb/config-vars/config-mapping.ts,
 * common/store/mongodb/config-variable-document.ts): a variable as a document
 * and back through the driver's BSON, and the filters, sort and upsert of the
 * API's members and of the dispatcher's read, run by mingo over documents of
 * the engine's shape. No MongoDB server can run here, so mingo stands in for
 * one (mingo-collection.ts); it compares strings by UTF-16 code unit, which
 * is the server's simple collation (UTF-8 bytes, code points) for the keys
 * used here (none beyond the BMP). What needs a server (the unique index, the
 * collation passed, transactions) is the conformance suite's.
 */
import { describe, expect, test } from "bun:test";
import {
  CONFIG_VARIABLE_LIST_SORT,
  putConfigVariableUpdate,
  toConfigVariable,
} from "../../../api/store/mongodb/config-vars/config-mapping.ts";
import { MQL_COLLATION } from "../../../api/store/mongodb/query/mql-layout.ts";
import type { ConfigVariable } from "../../../api/store/ports/config-port.ts";
import {
  type ConfigVariableDocument,
  configVariableFilter,
  STORED_VARIABLE_PROJECTION,
  toStoredVariable,
  variablesFilter,
} from "../../../common/store/mongodb/config-variable-document.ts";
import { configVariable } from "../conformance/fixtures.ts";
import { MingoCollection } from "./mingo-collection.ts";

const A = "tenant-a";
const B = "tenant-b";

/** putConfigVariable's upsert, as the session issues it. */
const put = (docs: MingoCollection, v: ConfigVariable) =>
  docs.updateOne(configVariableFilter(v.tenantId, v.key), putConfigVariableUpdate(v), { upsert: true });
const find = (docs: MingoCollection, tenantId: string, key: string) => {
  const doc = docs.findOne(configVariableFilter(tenantId, key));
  return doc ? toConfigVariable(doc as ConfigVariableDocument) : null;
};
const list = (docs: MingoCollection, tenantId: string) =>
  docs
    .find({ t: tenantId }, { sort: CONFIG_VARIABLE_LIST_SORT })
    .map((d) => toConfigVariable(d as ConfigVariableDocument));

describe("config variables as documents", () => {
  test("put creates the variable: every field read back through BSON as given (times beyond 32 bits)", () => {
    const docs = new MingoCollection();
    const v = {
      ...configVariable(A, "API_KEY", "sealed:abc", 1_764_000_000_000),
      configType: "secret" as const,
      description: "the key",
    };
    expect(put(docs, v)).toEqual({ matchedCount: 0, upsertedCount: 1 });
    expect(find(docs, A, "API_KEY")).toStrictEqual(v);
    expect(docs.all()).toHaveLength(1);
    expect(docs.all()[0]).toMatchObject({ t: A, key: "API_KEY", configType: "secret", value: "sealed:abc" });
  });

  test("put again replaces type, value, description and updatedAt, keeping the creation time; one document per key", () => {
    const docs = new MingoCollection();
    put(docs, configVariable(A, "B", "value of B"));
    const secret: ConfigVariable = {
      ...configVariable(A, "B", "sealed:new", 5000),
      configType: "secret",
      description: "now a secret",
    };
    expect(put(docs, secret)).toEqual({ matchedCount: 1, upsertedCount: 0 });
    expect(find(docs, A, "B")).toEqual({ ...secret, createdAt: 1000 });
    expect(docs.all()).toHaveLength(1);
    // The update never writes the tenant, the key or (outside an insert) the creation time.
    expect(Object.keys(putConfigVariableUpdate(secret).$set).sort()).toEqual([
      "configType",
      "description",
      "updatedAt",
      "value",
    ]);
  });

  test("found by exact key, in the tenant only: 'B' is not 'b', another tenant's 'B' is not this one's", () => {
    const docs = new MingoCollection();
    put(docs, configVariable(A, "b", "lower"));
    put(docs, configVariable(B, "B", "theirs"));
    expect(find(docs, A, "B")).toBeNull();
    expect(find(docs, A, "b")?.value).toBe("lower");
    expect(find(docs, B, "b")).toBeNull();
    expect(find(docs, "tenant-c", "B")).toBeNull();
  });

  test("listed by key in code-point order (upper case before lower, '_' between), the tenant's only", () => {
    const docs = new MingoCollection();
    for (const key of ["b", "B", "a_1", "A", "é", "z"]) put(docs, configVariable(A, key, `value of ${key}`));
    put(docs, configVariable(B, "0", "theirs"));
    expect(list(docs, A).map((v) => v.key)).toEqual(["A", "B", "a_1", "b", "z", "é"]);
    expect(list(docs, B).map((v) => v.key)).toEqual(["0"]);
    expect(list(docs, "tenant-c")).toEqual([]);
    // The collation every call passes: simple, the code-point order above (not a locale's).
    expect(MQL_COLLATION).toEqual({ locale: "simple" });
  });

  test("deleted by exact key in the tenant only", () => {
    const docs = new MingoCollection();
    put(docs, configVariable(A, "B", "x"));
    put(docs, configVariable(B, "B", "y"));
    expect(docs.deleteOne(configVariableFilter(A, "b")).deletedCount).toBe(0);
    expect(docs.deleteOne(configVariableFilter(A, "B")).deletedCount).toBe(1);
    expect(docs.deleteOne(configVariableFilter(A, "B")).deletedCount).toBe(0);
    expect(list(docs, A)).toEqual([]);
    expect(list(docs, B).map((v) => v.value)).toEqual(["y"]);
  });
});

describe("the dispatcher's view", () => {
  test("the variables a template names: the tenant's among the keys, exact, key, type and value only", () => {
    const docs = new MingoCollection();
    put(docs, { ...configVariable(A, "TOKEN", "sealed:t"), configType: "secret", description: "d" });
    put(docs, configVariable(A, "host", "example.org"));
    put(docs, configVariable(A, "unasked", "no"));
    put(docs, configVariable(B, "TOKEN", "theirs"));
    const found = docs
      .find(variablesFilter(A, ["TOKEN", "host", "HOST", "absent"]), {
        sort: CONFIG_VARIABLE_LIST_SORT,
        projection: STORED_VARIABLE_PROJECTION,
      })
      .map((doc) => toStoredVariable(doc as ConfigVariableDocument));
    expect(found).toStrictEqual([
      { key: "TOKEN", configType: "secret", value: "sealed:t" },
      { key: "host", configType: "plain-text", value: "example.org" },
    ]);
    expect(docs.find(variablesFilter(A, []))).toEqual([]);
  });
});
