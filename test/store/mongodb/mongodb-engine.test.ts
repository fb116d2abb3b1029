/**
 * What the MongoDB engine's opening (common/store/mongodb/mongodb-engine.ts) says and reads
 * without a server: the URL shown in messages (never its password), the database it names, the
 * oldest server version it starts on. Its refusals at start are start-refusals.test.ts's.
 */
import { expect, test } from "bun:test";
import {
  databaseOf,
  OLDEST_SUPPORTED_VERSION,
  shownUrl,
} from "../../../common/store/mongodb/mongodb-engine.ts";

test.each([
  [
    "mongodb://tds:secret@db.example:27017/tds?replicaSet=rs0",
    "mongodb://tds@db.example:27017/tds?replicaSet=rs0",
  ],
  ["mongodb+srv://tds:p%40ss@cluster.example/tds", "mongodb+srv://tds@cluster.example/tds"],
  ["mongodb://:secret@a:1,b:2/x", "mongodb://a:1,b:2/x"],
  ["mongodb://a:1,b:2/x?replicaSet=rs", "mongodb://a:1,b:2/x?replicaSet=rs"],
])("messages show %s as %s: never the password", (url, shown) => {
  expect(shownUrl(url)).toBe(shown);
  expect(shownUrl(url)).not.toContain("secret");
});

test.each([
  ["mongodb://db.example:27017/tds_prod?replicaSet=rs0", "tds_prod"],
  ["mongodb://a:1,b:2/?replicaSet=rs", "tds"],
  ["mongodb://a:1", "tds"],
  ["mongodb+srv://u:p@cluster.example/app%20data?retryWrites=true", "app data"],
])("%s keeps its data in the database %s (tds when it names none)", (url, database) => {
  expect(databaseOf(url)).toBe(database);
});

test("the oldest server the engine starts on has compound wildcard indexes (7.0)", () => {
  expect(OLDEST_SUPPORTED_VERSION).toEqual([7, 0]);
});
