/** docs/STANDARD_OBJECTS.md is what the standard objects' definitions render to. */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { renderStandardObjectsDoc } from "../../scripts/standard-objects-doc.ts";

test("docs/STANDARD_OBJECTS.md matches api/model/standard-objects.ts (else: bun scripts/standard-objects-doc.ts)", async () => {
  const written = await Bun.file(join(import.meta.dir, "../../docs/STANDARD_OBJECTS.md")).text();
  expect(written).toBe(renderStandardObjectsDoc());
  expect(written).toContain("values: Queued, Pending Allocation");
});
