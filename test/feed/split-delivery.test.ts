import { describe, expect, test } from "bun:test";
import { splitDelivery } from "../../api/feed/split-delivery.ts";
import { type DeliveryJob, deliveryIdOf, deliveryJobId } from "../../common/delivery-job.ts";

const job = (body: unknown[]): DeliveryJob => ({
  tenantId: "t",
  webhookId: "w",
  eventId: "m",
  deliveryId: deliveryIdOf("w", "m", 1_700_000_000_000),
  body,
  committedAt: 1_700_000_000_000,
});
/** An element whose JSON is exactly `bytes` bytes long: `{"x":"…"}` is 8 bytes around the text. */
const sized = (bytes: number, fill = "a") => ({ x: fill.repeat(bytes - 8) });
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe("splitDelivery", () => {
  test("a body within the limit is the job as it came, one delivery", () => {
    const whole = job([sized(100), sized(100)]);
    const limit = bytesOf(whole.body);
    expect(limit).toBe(203);
    const [only, ...rest] = splitDelivery(whole, limit);
    expect(rest).toEqual([]);
    expect(only?.job).toBe(whole);
    expect(only?.bodyText).toBe(JSON.stringify(whole.body));
    expect(only?.bytes).toBe(limit);
  });

  const cases: [string, number[], number, number[][]][] = [
    // element sizes, limit, expected element indexes per part
    ["one byte over: two parts", [100, 100], 202, [[0], [1]]],
    [
      "parts filled in order: 3 × 100 bytes, 2 commas and 2 brackets make 304",
      [100, 100, 100, 100, 100],
      304,
      [
        [0, 1, 2],
        [3, 4],
      ],
    ],
    ["one byte less: two per part", [100, 100, 100, 100, 100], 303, [[0, 1], [2, 3], [4]]],
    [
      "a lone element over the limit goes alone; its neighbours are not merged in",
      [50, 500, 50, 50],
      200,
      [[0], [1], [2, 3]],
    ],
    ["every element over the limit: one each", [300, 300], 100, [[0], [1]]],
  ];
  for (const [name, sizes, limit, expected] of cases) {
    test(name, () => {
      const elements = sizes.map((size, i) => ({ ...sized(size - String(i).length - 5), i }));
      expect(elements.map(bytesOf)).toEqual(sizes);
      const planned = splitDelivery(job(elements), limit);
      expect(planned.map((p) => (p.job.body as { i: number }[]).map((e) => e.i))).toEqual(expected);
      expect(planned.flatMap((p) => p.job.body)).toEqual(elements);
      for (const p of planned) {
        expect(p.bodyText).toBe(JSON.stringify(p.job.body));
        expect(p.bytes).toBe(Buffer.byteLength(p.bodyText));
        if (p.job.body.length > 1) expect(p.bytes).toBeLessThanOrEqual(limit);
      }
    });
  }

  test("bytes, not characters: multi-byte text counts for what it weighs in UTF-8", () => {
    // 3 elements of 40 '€' (3 bytes each): 128 bytes of JSON each, though 48 characters.
    const elements = [0, 1, 2].map(() => ({ x: "€".repeat(40) }));
    expect(bytesOf(elements[0])).toBe(128);
    expect(splitDelivery(job(elements), 300).map((p) => p.job.body.length)).toEqual([2, 1]);
  });

  test("parts are deliveries of their own: ids derived from webhook × mutation × part, part 0 as before", () => {
    const whole = job([sized(100), sized(100), sized(100)]);
    const planned = splitDelivery(whole, 150);
    expect(planned.map((p) => p.job.part)).toEqual([0, 1, 2]);
    expect(planned[0]?.job.deliveryId).toBe(whole.deliveryId);
    expect(new Set(planned.map((p) => p.job.deliveryId)).size).toBe(3);
    expect(planned.map((p) => p.job.deliveryId)).toEqual(
      [0, 1, 2].map((part) => deliveryIdOf("w", "m", whole.committedAt, part)),
    );
    // Planned again (a re-read after a crash): the same deliveries.
    expect(splitDelivery(whole, 150)).toEqual(planned);
    const jobIds = planned.map((p) => deliveryJobId(p.job.webhookId, p.job.eventId, p.job.part));
    expect(jobIds).toEqual(["w.m", "w.m.1", "w.m.2"]);
    expect(planned.map((p) => p.job.deliveryId[14])).toEqual(["7", "7", "7"]);
  });
});
