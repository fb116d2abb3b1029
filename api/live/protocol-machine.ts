/**
 * The live-subscription protocol as a pure state machine: the connection's state and one input
 * (a client message, the outcome of work the shell did, a timer) in → the next state and the
 * actions the shell performs (send, close, authenticate, subscribe, unsubscribe) out. Both
 * subprotocols run on it; where they differ, the table of outgoing message types and a few
 * branches below say how. No socket, clock or store here: live-connection.ts is the shell.
 */

import {
  type ClientMessage,
  decodeClientMessage,
  type LiveProtocol,
  type SubscribeRequest,
} from "./client-message.ts";
import { CLOSE, type CloseCause } from "./close-codes.ts";

export type Phase = "waiting-init" | "authenticating" | "ready" | "closed";

export interface MachineState {
  readonly protocol: LiveProtocol;
  readonly phase: Phase;
  /** Ids of the subscriptions accepted or being set up. */
  readonly subscriptions: ReadonlySet<string>;
  /** Subscribes the older protocol sent before its `connection_ack` (its clients do not wait). */
  readonly queued: readonly { id: string; request: SubscribeRequest }[];
  /** LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION. */
  readonly maxSubscriptions: number;
}

/** A GraphQL error as sent in an `error` message. */
export interface WireError {
  message: string;
  extensions?: Record<string, unknown>;
}

export type MachineInput =
  | { type: "message"; raw: unknown }
  | { type: "authenticated" }
  | { type: "auth-failed"; cause: CloseCause; message: string }
  | { type: "subscribe-failed"; id: string; errors: WireError[] }
  | { type: "event"; id: string; payload: unknown }
  | { type: "init-timeout" }
  | { type: "keep-alive" }
  | { type: "token-invalid"; message: string }
  | { type: "slow-client" }
  | { type: "shutdown" };

export type MachineAction =
  | { type: "send"; message: Record<string, unknown> }
  | { type: "close"; code: number; reason: string }
  /** Authenticate with the init payload's token (null: none there; the shell tries the upgrade's header). */
  | { type: "authenticate"; authorization: string | null }
  | { type: "subscribe"; id: string; request: SubscribeRequest }
  | { type: "unsubscribe"; id: string };

export interface Step {
  state: MachineState;
  actions: MachineAction[];
}

/** The outgoing message types of each protocol. */
const OUTGOING = {
  "graphql-transport-ws": { next: "next", error: "error", complete: "complete" },
  "graphql-ws": { next: "data", error: "error", complete: "complete" },
} as const;

export function initialState(protocol: LiveProtocol, maxSubscriptions: number): MachineState {
  return { protocol, phase: "waiting-init", subscriptions: new Set(), queued: [], maxSubscriptions };
}

const close = (state: MachineState, cause: CloseCause, reason: string = cause.reason): Step => ({
  state: { ...state, phase: "closed", subscriptions: new Set(), queued: [] },
  actions: [{ type: "close", code: cause.code, reason }],
});

const stay = (state: MachineState, actions: MachineAction[] = []): Step => ({ state, actions });

/** The token an init payload carries: `Authorization` (any case) at the top or under `headers`. */
export function authorizationOf(payload: Record<string, unknown> | null): string | null {
  const find = (object: unknown): string | null => {
    if (typeof object !== "object" || object === null) return null;
    for (const [key, value] of Object.entries(object))
      if (key.toLowerCase() === "authorization" && typeof value === "string") return value;
    return null;
  };
  return find(payload) ?? find(payload?.headers);
}

/** One input applied to the state. */
export function step(state: MachineState, input: MachineInput): Step {
  if (state.phase === "closed") return stay(state);
  switch (input.type) {
    case "message": {
      const message = decodeClientMessage(state.protocol, input.raw);
      return message ? onMessage(state, message) : close(state, CLOSE.invalidMessage);
    }
    case "authenticated":
      return onAuthenticated(state);
    case "auth-failed":
      return onAuthFailed(state, input.cause, input.message);
    case "subscribe-failed": {
      if (!state.subscriptions.has(input.id)) return stay(state);
      const subscriptions = new Set(state.subscriptions);
      subscriptions.delete(input.id);
      const error = { type: OUTGOING[state.protocol].error, id: input.id, payload: input.errors };
      return stay({ ...state, subscriptions }, [{ type: "send", message: error }]);
    }
    case "event": {
      if (!state.subscriptions.has(input.id)) return stay(state);
      const next = { type: OUTGOING[state.protocol].next, id: input.id, payload: input.payload };
      return stay(state, [{ type: "send", message: next }]);
    }
    case "init-timeout":
      return state.phase === "waiting-init" ? close(state, CLOSE.initTimeout) : stay(state);
    case "keep-alive":
      if (state.phase !== "ready") return stay(state);
      return stay(state, [
        { type: "send", message: { type: state.protocol === "graphql-ws" ? "ka" : "ping" } },
      ]);
    case "token-invalid":
      return close(state, CLOSE.forbidden, `Forbidden: ${input.message}`);
    case "slow-client":
      return close(state, CLOSE.slowClient);
    case "shutdown":
      return close(state, CLOSE.goingAway);
  }
}

function onMessage(state: MachineState, message: ClientMessage): Step {
  switch (message.type) {
    case "connection_init":
      if (state.phase !== "waiting-init") return close(state, CLOSE.tooManyInits);
      return {
        state: { ...state, phase: "authenticating" },
        actions: [{ type: "authenticate", authorization: authorizationOf(message.payload) }],
      };
    case "ping":
      return stay(state, [
        {
          type: "send",
          message: message.payload ? { type: "pong", payload: message.payload } : { type: "pong" },
        },
      ]);
    case "pong":
      return stay(state);
    case "terminate":
      return close(state, CLOSE.normal);
    case "complete": {
      if (!state.subscriptions.has(message.id)) {
        const queued = state.queued.filter((entry) => entry.id !== message.id);
        return stay({ ...state, queued });
      }
      const subscriptions = new Set(state.subscriptions);
      subscriptions.delete(message.id);
      const actions: MachineAction[] = [{ type: "unsubscribe", id: message.id }];
      // The older protocol's clients wait for `complete` after their `stop`; the newer's do not.
      if (state.protocol === "graphql-ws")
        actions.push({ type: "send", message: { type: "complete", id: message.id } });
      return stay({ ...state, subscriptions }, actions);
    }
    case "subscribe":
      return onSubscribe(state, message.id, message.request);
  }
}

function onSubscribe(state: MachineState, id: string, request: SubscribeRequest): Step {
  const known = state.subscriptions.has(id) || state.queued.some((entry) => entry.id === id);
  if (known) return close(state, CLOSE.duplicateId, `Subscriber for ${id} already exists`);
  if (state.phase !== "ready") {
    if (state.protocol === "graphql-ws" && state.phase === "authenticating")
      return stay({ ...state, queued: [...state.queued, { id, request }] });
    return close(state, CLOSE.unauthorized);
  }
  if (state.subscriptions.size >= state.maxSubscriptions) {
    const errors: WireError[] = [
      {
        message: `at most ${state.maxSubscriptions} subscriptions are allowed on one connection`,
        extensions: { code: "LIMIT_EXCEEDED" },
      },
    ];
    return stay(state, [
      { type: "send", message: { type: OUTGOING[state.protocol].error, id, payload: errors } },
    ]);
  }
  const subscriptions = new Set(state.subscriptions).add(id);
  return stay({ ...state, subscriptions }, [{ type: "subscribe", id, request }]);
}

function onAuthenticated(state: MachineState): Step {
  if (state.phase !== "authenticating") return stay(state);
  let next: MachineState = { ...state, phase: "ready", queued: [] };
  const actions: MachineAction[] = [{ type: "send", message: { type: "connection_ack" } }];
  // The older protocol's keep-alive starts right after the ack, as subscriptions-transport-ws did.
  if (state.protocol === "graphql-ws") actions.push({ type: "send", message: { type: "ka" } });
  for (const { id, request } of state.queued) {
    const stepped = onSubscribe(next, id, request);
    next = stepped.state;
    actions.push(...stepped.actions);
    if (next.phase === "closed") break;
  }
  return { state: next, actions };
}

function onAuthFailed(state: MachineState, cause: CloseCause, message: string): Step {
  if (state.phase !== "authenticating") return stay(state);
  const closed = close(state, cause, `${cause.reason}: ${message}`);
  // The older protocol says why in a message before the close, as its clients expect.
  if (state.protocol === "graphql-ws")
    closed.actions.unshift({ type: "send", message: { type: "connection_error", payload: { message } } });
  return closed;
}
