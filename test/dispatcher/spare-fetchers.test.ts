/** How many spares run, and which, as attempts turn slow and end (the workers themselves: isolation.test.ts). */
import { describe, expect, test } from "bun:test";
import { createSpareFetchers, type Fetcher } from "../../dispatcher/spare-fetchers.ts";

/** Spares that say whether they are taking jobs, and a regular fetcher. */
function pool(max: number) {
  const made: { name: string; taking: boolean; busy: boolean }[] = [];
  const fetchers: Fetcher[] = [];
  const spares = createSpareFetchers(max, () => {
    const state = { name: `spare-${made.length + 1}`, taking: false, busy: false };
    made.push(state);
    const fetcher: Fetcher = {
      start: () => {
        state.taking = true;
      },
      stop: () => {
        state.taking = false;
      },
      busy: () => state.busy,
    };
    fetchers.push(fetcher);
    return fetcher;
  });
  const taking = () => made.filter((s) => s.taking).map((s) => s.name);
  const regular: Fetcher = { start: () => undefined, stop: () => undefined, busy: () => true };
  return { spares, taking, made, spare: (i: number) => fetchers[i] as Fetcher, regular };
}

describe("spare fetchers", () => {
  test("one spare takes jobs per slow attempt, made when first needed and then reused", () => {
    const p = pool(8);
    expect(p.made).toHaveLength(0);
    p.spares.slowStarted(p.regular);
    p.spares.slowStarted(p.regular);
    expect(p.taking()).toEqual(["spare-1", "spare-2"]);
    p.spares.slowEnded(p.regular);
    expect(p.taking()).toHaveLength(1);
    p.spares.slowStarted(p.regular);
    expect(p.taking()).toEqual(["spare-1", "spare-2"]);
    expect(p.made).toHaveLength(2);
  });

  test("never more spares than the limit, however many attempts hang", () => {
    const p = pool(2);
    for (let i = 0; i < 5; i++) p.spares.slowStarted(p.regular);
    expect(p.taking()).toEqual(["spare-1", "spare-2"]);
    expect(p.made).toHaveLength(2);
    for (let i = 0; i < 3; i++) p.spares.slowEnded(p.regular);
    expect(p.taking()).toHaveLength(2);
    p.spares.slowEnded(p.regular);
    expect(p.taking()).toHaveLength(1);
  });

  test("a spare that hangs itself gets a spare; when an attempt ends, a spare not hanging stops", () => {
    const p = pool(8);
    p.spares.slowStarted(p.regular);
    p.spares.slowStarted(p.spare(0));
    expect(p.taking()).toEqual(["spare-1", "spare-2"]);
    p.spares.slowEnded(p.regular);
    // spare-1 still waits on its slow attempt; spare-2 is the one free to give back.
    expect(p.taking()).toEqual(["spare-1"]);
    p.spares.slowEnded(p.spare(0));
    expect(p.taking()).toEqual([]);
  });

  test("a limit of 0 starts none; after close none starts again", () => {
    const none = pool(0);
    none.spares.slowStarted(none.regular);
    expect(none.made).toHaveLength(0);

    const p = pool(4);
    p.spares.slowStarted(p.regular);
    p.spares.close();
    expect(p.taking()).toEqual([]);
    p.spares.slowStarted(p.regular);
    p.spares.slowEnded(p.regular);
    expect(p.taking()).toEqual([]);
  });

  test("an idle stopped spare is started before one still finishing its job; a new one before a busy one", () => {
    const p = pool(3);
    for (let i = 0; i < 2; i++) p.spares.slowStarted(p.regular);
    for (let i = 0; i < 2; i++) p.spares.slowEnded(p.regular);
    expect(p.taking()).toEqual([]);
    (p.made[0] as { busy: boolean }).busy = true;
    p.spares.slowStarted(p.regular);
    expect(p.taking()).toEqual(["spare-2"]);
    (p.made[1] as { busy: boolean }).busy = true;
    p.spares.slowStarted(p.regular);
    expect(p.taking()).toEqual(["spare-2", "spare-3"]);
    p.spares.slowStarted(p.regular);
    expect(p.taking()).toEqual(["spare-1", "spare-2", "spare-3"]);
  });
});
