/**
 * A catalogue name taken, on the MongoDB engine: the duplicate key the unique indexes
 * `custom_object_name` and `custom_field_name` raise becomes the ConflictError the other engines
 * raise, worded alike (`uniquely`, api/store/mongodb/driver-errors.ts), on the driver's own error
 * classes as the server's answers build them (no server can run here); a write conflict is left
 * for the unit of work to run again.
 */

import { describe, expect, test } from "bun:test";
import { MongoBulkWriteError, MongoServerError } from "mongodb";
import { ConflictError } from "../../../common/errors.ts";
import { uniquely } from "../../../common/store/mongodb/driver-errors.ts";
import { writeConflict } from "./scripted-stream.ts";

const duplicate = (labels: string[] = []) =>
  new MongoServerError({
    message: "E11000 duplicate key error collection: tds.custom_objects index: custom_object_name (scripted)",
    code: 11000,
    codeName: "DuplicateKey",
    keyPattern: { t: 1, nameKey: 1 },
    keyValue: { t: "tenant-a", nameKey: "owners" },
    errorLabels: labels,
  });

/** An insertMany's failure at the document of index `index`, as the driver reports it. */
const bulkDuplicate = (index: number) =>
  new MongoBulkWriteError(
    {
      message: "E11000 (scripted)",
      code: 11000,
      writeErrors: [
        {
          code: 11000,
          index,
          errmsg: "E11000 (scripted)",
          errInfo: {},
          getOperation: () => ({ _id: `field-${index}`, t: "tenant-a", o: "object", nameKey: "name" }),
        },
      ],
    } as never,
    { insertedCount: index } as never,
  );

const failWith = (error: unknown) => async () => {
  throw error;
};

describe("a name taken is a ConflictError worded as on the other engines", () => {
  test("a single insert's duplicate key", async () => {
    const refused = await uniquely(
      failWith(duplicate()),
      () => "an object named 'OWNERS' exists already",
    ).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConflictError);
    expect(refused).toMatchObject({ code: "conflict", message: "an object named 'OWNERS' exists already" });
  });

  test("an insertMany's duplicate key names the document it failed on", async () => {
    const names = ["Alpha", "Beta", "Gamma"];
    const refused = await uniquely(
      failWith(bulkDuplicate(2)),
      (index) => `Owners has a field named '${names[index]}' already`,
    ).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as Error).message).toBe("Owners has a field named 'Gamma' already");
  });

  test("a write conflict, or a duplicate key labelled transient, is left for the unit of work to run again", async () => {
    for (const error of [writeConflict(), duplicate(["TransientTransactionError"])]) {
      expect(await uniquely(failWith(error), () => "taken").catch((e: unknown) => e)).toBe(error);
    }
  });

  test("any other error is rethrown as it is; a write that succeeds answers its result", async () => {
    const other = new MongoServerError({ message: "BadValue (scripted)", code: 2, codeName: "BadValue" });
    expect(await uniquely(failWith(other), () => "taken").catch((e: unknown) => e)).toBe(other);
    expect(
      await uniquely(
        async () => 7,
        () => "taken",
      ),
    ).toBe(7);
  });
});
