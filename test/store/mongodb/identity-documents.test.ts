/**
 * The MongoDB engine's identity documents and queries (api/store/mongodb/identity/identity-documents.ts),
 * the whole of the aggregate's logic: tenants, users and tokens to documents and back through the
 * driver's own BSON serializer (what a read returns), and the filters, orders and updates the
 * members send, run by mingo over in-memory collections of documents of the engine's shape, with
 * decoys of another tenant beside each one.
 *
 * mingo, an independent interpreter of MongoDB's query language, stands in for the server because
 * none can run on this machine. What it does not prove: the unique indexes (tenant_name,
 * user_name) refusing a second name, and which index the planner picks; transactions (that the
 * revocation and the version move commit together, that every call carries the unit's session);
 * concurrency (write conflicts, runs again); the server's string order (UTF-8 bytes; mingo
 * compares UTF-16 code units, the same for the ASCII ids here). Those are the conformance suite's,
 * on a replica set (MONGODB_TEST_URL).
 */

import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { find, Query, update, updateOne } from "mingo";
import { BSON, type Document } from "mongodb";
import {
  bumpVersion,
  EXPORT_ORDER,
  exportPageFilter,
  exportPageLimit,
  REVOCATION_VERSION_ID,
  revocationVersionFilter,
  revokeUpdate,
  TENANT_ORDER,
  TOKEN_ORDER,
  tenantByIdFilter,
  tenantByNameFilter,
  tenantDocument,
  tenantTokensFilter,
  tokenDocument,
  tokenFilter,
  toTenant,
  toToken,
  toUser,
  userByNameFilter,
  userDocument,
  userFilter,
} from "../../../api/store/mongodb/identity/identity-documents.ts";
import type { Tenant, TokenRecord, User } from "../../../api/store/ports/identity-port.ts";
import { foldAsciiCase } from "../../../common/store/mongodb/fold-ascii-case.ts";

/** What the server would hand back: the document through the driver's BSON and back. */
const stored = <T extends object>(document: T): T => BSON.deserialize(BSON.serialize(document)) as T;

const NOW = 1_764_150_000_000; // past int32: stored as a double, read back as a number
const tenantA: Tenant = { id: "tenant-a", name: "Acme", createdAt: NOW };
const tenantB: Tenant = { id: "tenant-b", name: "beta", createdAt: NOW - 1 };
const tenantC: Tenant = { id: "tenant-0", name: "Émile", createdAt: NOW }; // same time as Acme: id decides

const userOf = (tenantId: string, id: string, username: string, extra: Partial<User> = {}): User => ({
  id,
  tenantId,
  username,
  email: `${username}@example.invalid`,
  firstName: "Ada",
  lastName: "Lovelace",
  roles: ["scheduler"],
  isActive: true,
  createdAt: NOW,
  ...extra,
});

const tokenOf = (tenantId: string, jti: string, extra: Partial<TokenRecord> = {}): TokenRecord => ({
  jti,
  tenantId,
  userId: "u-a",
  roles: ["scheduler"],
  description: null,
  createdAt: NOW,
  expiresAt: null,
  revokedAt: null,
  ...extra,
});

/** What the server's updateOne does to `collection` revoking what `filter` finds at `at` (mingo runs it). */
const revokeIn = (collection: object[], filter: object, at: number) =>
  updateOne(collection as Document[], filter as Document, revokeUpdate(at));

/** The documents `filter` finds in `collection`, in `order`, at most `limit` (mingo runs the query). */
function run<T>(collection: T[], filter: object, order?: object, limit?: number): T[] {
  let cursor = find(collection, filter as Document);
  if (order) cursor = cursor.sort(order as Document);
  if (limit !== undefined) cursor = cursor.limit(limit);
  return cursor.all() as T[];
}

describe("documents", () => {
  test("a tenant, a user and a token come back from their documents as they went in, through BSON", () => {
    const users = [
      userOf("tenant-a", "u-1", "Ada"),
      userOf("tenant-a", "u-2", "bob", {
        firstName: null,
        roles: ["administrator", "scheduler"],
        isActive: false,
      }),
    ];
    const tokens = [
      tokenOf("tenant-a", "t-1"),
      tokenOf("tenant-a", "t-2", { description: "ci", expiresAt: NOW + 3_600_000, revokedAt: NOW + 5 }),
      tokenOf("tenant-a", "t-3", { createdAt: 7, roles: [] }),
    ];
    for (const tenant of [tenantA, tenantB, tenantC])
      expect(toTenant(stored(tenantDocument(tenant)))).toEqual(tenant);
    for (const user of users) expect(toUser(stored(userDocument(user)))).toEqual(user);
    for (const token of tokens) expect(toToken(stored(tokenDocument(token)))).toEqual(token);
    expect(typeof toTenant(stored(tenantDocument(tenantA))).createdAt).toBe("number");
  });

  test("the documents have the layout's fields (layout.ts), ids as `_id`, the tenant as `t`, names folded beside", () => {
    expect(tenantDocument(tenantA)).toEqual({
      _id: "tenant-a",
      name: "Acme",
      nameKey: "acme",
      createdAt: NOW,
    });
    expect(Object.keys(userDocument(userOf("tenant-a", "u-1", "Ada")))).toEqual([
      "_id",
      "t",
      "username",
      "usernameKey",
      "email",
      "firstName",
      "lastName",
      "roles",
      "isActive",
      "createdAt",
    ]);
    expect(userDocument(userOf("tenant-a", "u-1", "Ada"))).toMatchObject({
      _id: "u-1",
      t: "tenant-a",
      usernameKey: "ada",
    });
    // Nulls are written, not left out: the revocation's $ifNull and a reader both see them.
    expect(tokenDocument(tokenOf("tenant-a", "t-1"))).toEqual({
      _id: "t-1",
      t: "tenant-a",
      userId: "u-a",
      roles: ["scheduler"],
      description: null,
      createdAt: NOW,
      expiresAt: null,
      revokedAt: null,
    });
  });

  test("a document's roles are its own array, not the caller's", () => {
    const user = userOf("tenant-a", "u-1", "Ada");
    const document = userDocument(user);
    document.roles.push("administrator");
    expect(user.roles).toEqual(["scheduler"]);
    expect(toUser(document).roles).not.toBe(document.roles);
  });

  test("a token document missing an optional field reads it as null, as a NULL column", () => {
    const {
      description: _d,
      expiresAt: _e,
      revokedAt: _r,
      ...bare
    } = tokenDocument(tokenOf("tenant-a", "t-1"));
    expect(toToken(bare as never)).toEqual(tokenOf("tenant-a", "t-1"));
  });
});

describe("names compared without regard to ASCII case, as SQLite's NOCASE compares them", () => {
  const names = [
    "Acme",
    "ACME",
    "acme",
    "aCmE",
    "Émile",
    "émile",
    "ÉMILE",
    "straße",
    "STRASSE",
    "K",
    "k",
    "\u212A",
    "İ",
    "i",
    "I",
    "a_b-1",
    "A_B-1",
    "",
  ];

  test("two names fold alike exactly when SQLite holds them equal under COLLATE NOCASE", () => {
    const sqlite = new Database(":memory:");
    const equal = sqlite.query<{ same: number }, [string, string]>("SELECT ?1 = ?2 COLLATE NOCASE AS same");
    for (const a of names)
      for (const b of names)
        expect([a, b, foldAsciiCase(a) === foldAsciiCase(b)]).toEqual([a, b, equal.get(a, b)?.same === 1]);
    sqlite.close();
  });

  test("folding lowers A–Z and changes nothing else", () => {
    expect(foldAsciiCase("Acme-Ops_2")).toBe("acme-ops_2");
    expect(foldAsciiCase("ÉMILE")).toBe("Émile");
    expect(foldAsciiCase("\u212A")).toBe("\u212A");
  });
});

describe("queries, run by mingo over the engine's documents", () => {
  const tenants = [tenantA, tenantB, tenantC].map((tenant) => stored(tenantDocument(tenant)));
  const users = [
    userOf("tenant-a", "u-a", "ada"),
    userOf("tenant-a", "u-b", "Bob"),
    // Decoys: another tenant's users, one with the same username as tenant-a's.
    userOf("tenant-b", "u-c", "ADA"),
    userOf("tenant-b", "u-0", "other"),
  ].map((user) => stored(userDocument(user)));

  test("a tenant by id, and by name without regard to ASCII case (and only ASCII case)", () => {
    expect(run(tenants, tenantByIdFilter("tenant-a")).map(toTenant)).toEqual([tenantA]);
    expect(run(tenants, tenantByIdFilter("tenant-x"))).toEqual([]);
    expect(run(tenants, tenantByNameFilter("aCME")).map(toTenant)).toEqual([tenantA]);
    expect(run(tenants, tenantByNameFilter("BETA")).map(toTenant)).toEqual([tenantB]);
    expect(run(tenants, tenantByNameFilter("gamma"))).toEqual([]);
    expect(run(tenants, tenantByNameFilter("ÉMILE")).map(toTenant)).toEqual([tenantC]);
    expect(run(tenants, tenantByNameFilter("émile"))).toEqual([]);
  });

  test("tenants oldest first, then by id", () => {
    expect(run(tenants, {}, TENANT_ORDER).map(toTenant)).toEqual([tenantB, tenantC, tenantA]);
  });

  test("a user is found within its tenant only, by id or by username without regard to case", () => {
    expect(run(users, userFilter("tenant-a", "u-a")).map((u) => u._id)).toEqual(["u-a"]);
    expect(run(users, userFilter("tenant-b", "u-a"))).toEqual([]);
    expect(run(users, userByNameFilter("tenant-a", "ADA")).map((u) => u._id)).toEqual(["u-a"]);
    expect(run(users, userByNameFilter("tenant-b", "ada")).map((u) => u._id)).toEqual(["u-c"]);
    expect(run(users, userByNameFilter("tenant-a", "bob")).map((u) => u._id)).toEqual(["u-b"]);
    expect(run(users, userByNameFilter("tenant-a", "other"))).toEqual([]);
  });

  test("a tenant's tokens: found within the tenant only, listed oldest first then by jti, revoked ones included", () => {
    const tokens = [
      tokenOf("tenant-a", "t-2"),
      tokenOf("tenant-a", "t-1", { revokedAt: NOW }),
      tokenOf("tenant-a", "t-9", { createdAt: NOW - 10 }),
      tokenOf("tenant-b", "t-0", { createdAt: NOW - 20 }),
    ].map((token) => stored(tokenDocument(token)));
    expect(run(tokens, tokenFilter("tenant-a", "t-1")).map(toToken)).toEqual([
      tokenOf("tenant-a", "t-1", { revokedAt: NOW }),
    ]);
    expect(run(tokens, tokenFilter("tenant-b", "t-1"))).toEqual([]);
    expect(run(tokens, tenantTokensFilter("tenant-a"), TOKEN_ORDER).map((t) => t._id)).toEqual([
      "t-9",
      "t-1",
      "t-2",
    ]);
    expect(run(tokens, tenantTokensFilter("tenant-c"), TOKEN_ORDER)).toEqual([]);
  });

  test("export pages walk a tenant's users in id order, a page at a time, and nothing of another tenant", () => {
    const pageOf = (after: string | null, limit: number) => {
      const count = exportPageLimit(limit);
      return count === null ? [] : run(users, exportPageFilter("tenant-a", after), EXPORT_ORDER, count);
    };
    expect(pageOf(null, 1).map((u) => u._id)).toEqual(["u-a"]);
    expect(pageOf("u-a", 1).map((u) => u._id)).toEqual(["u-b"]);
    expect(pageOf("u-b", 1)).toEqual([]);
    expect(pageOf(null, 10).map((u) => u._id)).toEqual(["u-a", "u-b"]);
    expect(pageOf("", 10).map((u) => u._id)).toEqual(["u-a", "u-b"]);
    // At most `limit`: never the server's "no limit" for 0.
    expect(pageOf(null, 0)).toEqual([]);
  });

  test("the conformance suite's copy case: pages of users and tokens in id order, revoked tokens kept", () => {
    const copyUsers = [
      ...["u-b", "u-a", "u-c"].map((id) => userOf("tenant-a", id, id)),
      userOf("tenant-b", "u-0", "other"),
    ].map((user) => stored(userDocument(user)));
    const tokens = ["t-2", "t-1", "t-3"].map((jti) => stored(tokenDocument(tokenOf("tenant-a", jti))));
    expect(revokeIn(tokens, tokenFilter("tenant-a", "t-3"), 7).matchedCount).toBe(1);
    const ids = (page: { _id: string }[]) => page.map((d) => d._id);
    expect(ids(run(copyUsers, exportPageFilter("tenant-a", null), EXPORT_ORDER, 2))).toEqual(["u-a", "u-b"]);
    expect(ids(run(copyUsers, exportPageFilter("tenant-a", "u-b"), EXPORT_ORDER, 2))).toEqual(["u-c"]);
    expect(run(copyUsers, exportPageFilter("tenant-a", "u-c"), EXPORT_ORDER, 2)).toEqual([]);
    const page = run(tokens, exportPageFilter("tenant-a", "t-1"), EXPORT_ORDER, 10).map(toToken);
    expect(page.map((t) => t.jti)).toEqual(["t-2", "t-3"]);
    expect(page[1]?.revokedAt).toBe(7);
    expect(run(tokens, exportPageFilter("tenant-b", null), EXPORT_ORDER, 10)).toEqual([]);
  });

  test("a page size the server would misread is no page: 0, negative, fractions rounded down", () => {
    expect([0, -1, 0.5, Number.NaN, 1, 2.9, 500].map(exportPageLimit)).toEqual([
      null,
      null,
      null,
      null,
      1,
      2,
      500,
    ]);
  });
});

describe("revocation", () => {
  const fresh = () =>
    [tokenOf("tenant-a", "t-1"), tokenOf("tenant-b", "t-2")].map((token) => stored(tokenDocument(token)));

  test("the first revocation's time is kept; a token matched again still counts as revoked", () => {
    const tokens = fresh();
    expect(revokeIn(tokens, tokenFilter("tenant-a", "t-1"), 1000).matchedCount).toBe(1);
    expect(revokeIn(tokens, tokenFilter("tenant-a", "t-1"), 2000).matchedCount).toBe(1);
    expect(run(tokens, tokenFilter("tenant-a", "t-1")).map(toToken)[0]?.revokedAt).toBe(1000);
  });

  test("another tenant's token, or no such token, matches nothing and changes nothing", () => {
    const tokens = fresh();
    const before = structuredClone(tokens);
    expect(revokeIn(tokens, tokenFilter("tenant-b", "t-1"), 1).matchedCount).toBe(0);
    expect(revokeIn(tokens, tokenFilter("tenant-a", "t-x"), 1).matchedCount).toBe(0);
    expect(tokens).toEqual(before);
  });

  test("a token document without revokedAt is revoked at the time given", () => {
    const { revokedAt: _, ...bare } = tokenDocument(tokenOf("tenant-a", "t-1"));
    const tokens = [bare as Document];
    revokeIn(tokens, tokenFilter("tenant-a", "t-1"), 5);
    expect(tokens[0]?.revokedAt).toBe(5);
  });

  test("the version starts at 1 (upserted) and moves by one per revocation recorded", () => {
    // The server's upsert inserts the filter's equality (`_id`) and applies the update to it.
    const version: Document = { ...revocationVersionFilter };
    update(version, bumpVersion as Document);
    expect(version).toEqual({ _id: REVOCATION_VERSION_ID, n: 1 });
    update(version, bumpVersion as Document);
    expect(stored(version)).toEqual({ _id: REVOCATION_VERSION_ID, n: 2 });
  });

  test("the version's document and a tenant's counters never match each other's filter", () => {
    const counters: Document[] = [
      { _id: REVOCATION_VERSION_ID, n: 3 },
      { _id: { t: REVOCATION_VERSION_ID, k: "catalogue" }, n: 4 },
      { _id: { t: "tenant-a", k: REVOCATION_VERSION_ID }, n: 5 },
      { _id: { t: "tenant-a", k: `seq:${REVOCATION_VERSION_ID}` }, n: 6 },
    ].map(stored);
    expect(run(counters, revocationVersionFilter).map((c) => c.n)).toEqual([3]);
    const tenantCounter = new Query({ _id: { t: REVOCATION_VERSION_ID, k: "catalogue" } });
    expect(counters.filter((c) => tenantCounter.test(c)).map((c) => c.n)).toEqual([4]);
  });
});
