/**
 * The protocol machine by tables of message sequences: each row feeds inputs to a fresh machine
 * and names the actions the last input yields (or the close it ends in).
 */
import { describe, expect, test } from "bun:test";
import { chooseProtocol, type LiveProtocol } from "../../api/live/client-message.ts";
import {
  authorizationOf,
  initialState,
  type MachineAction,
  type MachineInput,
  type MachineState,
  step,
} from "../../api/live/protocol-machine.ts";

const query = "subscription { schemaJobs { operation } }";
const msg = (raw: unknown): MachineInput => ({ type: "message", raw });
const init = (payload?: unknown) =>
  msg(payload === undefined ? { type: "connection_init" } : { type: "connection_init", payload });
const ready: MachineInput[] = [init({ Authorization: "Bearer t" }), { type: "authenticated" }];
const sub = (id: string) => msg({ type: "subscribe", id, payload: { query } });
const start = (id: string) => msg({ type: "start", id, payload: { query } });

/** Runs every input; returns the last state and every action of the last input. */
function run(
  protocol: LiveProtocol,
  inputs: MachineInput[],
  max = 100,
): { state: MachineState; last: MachineAction[] } {
  let state = initialState(protocol, max);
  let last: MachineAction[] = [];
  for (const input of inputs) ({ state, actions: last } = step(state, input));
  return { state, last };
}

const closeOf = (actions: MachineAction[]) => actions.find((a) => a.type === "close");

describe("graphql-transport-ws closes", () => {
  const cases: [string, MachineInput[], number][] = [
    ["text that is not JSON", [msg("{not json")], 4400],
    ["a number", [msg(42)], 4400],
    ["an unknown type", [msg({ type: "hello" })], 4400],
    ["a server message from the client", [msg({ type: "next", id: "1", payload: {} })], 4400],
    ["a subscribe without an id", [...ready, msg({ type: "subscribe", payload: { query } })], 4400],
    [
      "a subscribe whose query is not text",
      [...ready, msg({ type: "subscribe", id: "1", payload: { query: 1 } })],
      4400,
    ],
    ["an init whose payload is a list", [msg({ type: "connection_init", payload: [] })], 4400],
    ["the older protocol's start", [...ready, start("1")], 4400],
    ["a subscribe before the ack", [init(), sub("1")], 4401],
    ["a subscribe before any init", [sub("1")], 4401],
    [
      "no token",
      [init(), { type: "auth-failed", cause: { code: 4401, reason: "Unauthorized" }, message: "no" }],
      4401,
    ],
    [
      "a bad token",
      [init(), { type: "auth-failed", cause: { code: 4403, reason: "Forbidden" }, message: "no" }],
      4403,
    ],
    ["a token revoked later", [...ready, { type: "token-invalid", message: "revoked" }], 4403],
    ["no init in time", [{ type: "init-timeout" }], 4408],
    ["a second subscribe with one id", [...ready, sub("1"), sub("1")], 4409],
    ["a second init", [...ready, init()], 4429],
    ["a second init while authenticating", [init(), init()], 4429],
    ["a slow client", [...ready, { type: "slow-client" }], 1013],
    ["shutdown", [...ready, { type: "shutdown" }], 1001],
  ];
  for (const [name, inputs, code] of cases)
    test(`${name} → ${code}`, () => {
      const { state, last } = run("graphql-transport-ws", inputs);
      expect(closeOf(last)).toMatchObject({ type: "close", code });
      expect(state.phase).toBe("closed");
    });
});

describe("graphql-ws (older protocol) closes", () => {
  const cases: [string, MachineInput[], number][] = [
    ["an unknown type", [msg({ type: "subscribe", id: "1", payload: { query } })], 4400],
    ["a start before any init", [start("1")], 4401],
    ["a second start with one id", [...ready, start("1"), start("1")], 4409],
    ["connection_terminate", [...ready, msg({ type: "connection_terminate" })], 1000],
    [
      "a bad token",
      [init(), { type: "auth-failed", cause: { code: 4403, reason: "Forbidden" }, message: "no" }],
      4403,
    ],
  ];
  for (const [name, inputs, code] of cases)
    test(`${name} → ${code}`, () => {
      expect(closeOf(run("graphql-ws", inputs).last)).toMatchObject({ code });
    });

  test("a refused token is told in connection_error before the close", () => {
    const { last } = run("graphql-ws", [
      init(),
      { type: "auth-failed", cause: { code: 4403, reason: "Forbidden" }, message: "the token has expired" },
    ]);
    expect(last[0]).toEqual({
      type: "send",
      message: { type: "connection_error", payload: { message: "the token has expired" } },
    });
    expect(last[1]).toMatchObject({ type: "close", code: 4403, reason: "Forbidden: the token has expired" });
  });
});

describe("the flow", () => {
  test("init asks to authenticate with the payload's token, top level or under headers, any case", () => {
    expect(run("graphql-transport-ws", [init({ Authorization: "Bearer a" })]).last).toEqual([
      { type: "authenticate", authorization: "Bearer a" },
    ]);
    expect(authorizationOf({ headers: { authorization: "Bearer b" } })).toBe("Bearer b");
    expect(authorizationOf({ authorization: 3 })).toBeNull();
    expect(authorizationOf(null)).toBeNull();
  });

  test("authenticated → ack; a subscribe → subscribe; an event → next; complete → unsubscribe", () => {
    expect(run("graphql-transport-ws", ready).last).toEqual([
      { type: "send", message: { type: "connection_ack" } },
    ]);
    expect(run("graphql-transport-ws", [...ready, sub("a")]).last).toEqual([
      { type: "subscribe", id: "a", request: { query, variables: null, operationName: null } },
    ]);
    const event: MachineInput = { type: "event", id: "a", payload: { data: 1 } };
    expect(run("graphql-transport-ws", [...ready, sub("a"), event]).last).toEqual([
      { type: "send", message: { type: "next", id: "a", payload: { data: 1 } } },
    ]);
    const complete = msg({ type: "complete", id: "a" });
    expect(run("graphql-transport-ws", [...ready, sub("a"), complete]).last).toEqual([
      { type: "unsubscribe", id: "a" },
    ]);
    expect(run("graphql-transport-ws", [...ready, sub("a"), complete, event]).last).toEqual([]);
  });

  test("ping → pong with the payload; keep-alive → ping; a pong or an unknown complete → nothing", () => {
    expect(run("graphql-transport-ws", [msg({ type: "ping", payload: { x: 1 } })]).last).toEqual([
      { type: "send", message: { type: "pong", payload: { x: 1 } } },
    ]);
    expect(run("graphql-transport-ws", [...ready, { type: "keep-alive" }]).last).toEqual([
      { type: "send", message: { type: "ping" } },
    ]);
    expect(run("graphql-transport-ws", [{ type: "keep-alive" }]).last).toEqual([]);
    expect(run("graphql-transport-ws", [...ready, msg({ type: "pong" })]).last).toEqual([]);
    expect(run("graphql-transport-ws", [...ready, msg({ type: "complete", id: "zz" })]).last).toEqual([]);
  });

  test("a failed subscribe → error, and its id is free again", () => {
    const failed: MachineInput = { type: "subscribe-failed", id: "a", errors: [{ message: "bad" }] };
    expect(run("graphql-transport-ws", [...ready, sub("a"), failed]).last).toEqual([
      { type: "send", message: { type: "error", id: "a", payload: [{ message: "bad" }] } },
    ]);
    expect(run("graphql-transport-ws", [...ready, sub("a"), failed, sub("a")]).last[0]).toMatchObject({
      type: "subscribe",
    });
  });

  test("past the subscription limit a subscribe is answered with an error, the connection stays", () => {
    const { state, last } = run("graphql-transport-ws", [...ready, sub("a"), sub("b"), sub("c")], 2);
    expect(last).toEqual([
      {
        type: "send",
        message: {
          type: "error",
          id: "c",
          payload: [
            {
              message: "at most 2 subscriptions are allowed on one connection",
              extensions: { code: "LIMIT_EXCEEDED" },
            },
          ],
        },
      },
    ]);
    expect(state.phase).toBe("ready");
    expect(state.subscriptions.size).toBe(2);
  });

  test("the older protocol: starts sent before the ack wait for it; ack then ka; data; stop → complete", () => {
    const { last } = run("graphql-ws", [init(), start("1"), start("2"), { type: "authenticated" }]);
    expect(
      last.map((a) => (a.type === "send" ? a.message.type : `${a.type}:${"id" in a ? a.id : ""}`)),
    ).toEqual(["connection_ack", "ka", "subscribe:1", "subscribe:2"]);
    const event: MachineInput = { type: "event", id: "1", payload: { data: 1 } };
    expect(run("graphql-ws", [...ready, start("1"), event]).last).toEqual([
      { type: "send", message: { type: "data", id: "1", payload: { data: 1 } } },
    ]);
    expect(run("graphql-ws", [...ready, start("1"), msg({ type: "stop", id: "1" })]).last).toEqual([
      { type: "unsubscribe", id: "1" },
      { type: "send", message: { type: "complete", id: "1" } },
    ]);
    expect(run("graphql-ws", [...ready, { type: "keep-alive" }]).last).toEqual([
      { type: "send", message: { type: "ka" } },
    ]);
  });

  test("a closed machine ignores everything", () => {
    const { state } = run("graphql-transport-ws", [msg("x")]);
    expect(step(state, { type: "event", id: "a", payload: 1 }).actions).toEqual([]);
    expect(step(state, init()).actions).toEqual([]);
  });
});

describe("the subprotocol", () => {
  const cases: [string | null, LiveProtocol | null][] = [
    ["graphql-transport-ws", "graphql-transport-ws"],
    ["graphql-ws", "graphql-ws"],
    ["graphql-ws, graphql-transport-ws", "graphql-transport-ws"],
    ["mqtt", null],
    [null, null],
  ];
  for (const [offered, chosen] of cases)
    test(`${offered} → ${chosen}`, () => expect(chooseProtocol(offered)).toBe(chosen));
});
