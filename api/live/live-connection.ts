/**
 * The shell around one socket: feeds the protocol machine its inputs (the client's messages, the
 * outcomes of the work its actions ask for, timers) and performs its actions on the socket, the
 * auth service, the subscription compiler and the hub. Every send first checks the socket's send
 * buffer: past the bound, the connection is closed (1013), never left to grow.
 */
import { AppError, UnauthorizedError, ValidationError } from "../../common/errors.ts";
import { describeError, type Logger } from "../../common/log.ts";
import type { Principal } from "../auth/principal.ts";
import type { Subscription } from "../subscriptions/subscription.ts";
import type { LiveProtocol, SubscribeRequest } from "./client-message.ts";
import { CLOSE } from "./close-codes.ts";
import type { LiveHub, LiveSubscriberConnection } from "./live-hub.ts";
import {
  initialState,
  type MachineAction,
  type MachineInput,
  step,
  type WireError,
} from "./protocol-machine.ts";

/** What the shell needs of a socket (Bun's ServerWebSocket has all three). */
export interface LiveSocket {
  send(text: string): number;
  close(code: number, reason: string): void;
  getBufferedAmount(): number;
}

export interface LiveLimits {
  maxSubscriptionsPerConnection: number;
  /** Bytes the socket may hold unsent before the client is closed as too slow. */
  maxBufferedBytes: number;
  initTimeoutMs: number;
}

export interface LiveConnectionDeps {
  protocol: LiveProtocol;
  socket: LiveSocket;
  /** The upgrade request's `Authorization` header, used when `connection_init` carries none. */
  upgradeAuthorization: string | null;
  authenticate(header: string): Promise<Principal>;
  /** The subscription of a request for the tenant. @throws ValidationError when it is not one. */
  compile(tenantId: string, request: SubscribeRequest): Promise<Subscription>;
  hub: LiveHub;
  limits: LiveLimits;
  log: Logger;
  /** Called once, when the connection is done (closed by either side). */
  onClosed(connection: LiveConnection): void;
  /** Counts each message sent (metrics). */
  onSent?(): void;
}

export type LiveConnection = ReturnType<typeof createLiveConnection>;

/** Close reasons are at most 123 bytes on the wire. */
const MAX_REASON_BYTES = 123;
const fitReason = (reason: string) => {
  const bytes = new TextEncoder().encode(reason);
  return bytes.length <= MAX_REASON_BYTES
    ? reason
    : new TextDecoder().decode(bytes.slice(0, 120)).replace(/\uFFFD$/, "");
};

/** A compile failure as the GraphQL errors of an `error` message. */
function wireErrors(error: unknown): WireError[] {
  if (error instanceof ValidationError && error.details?.length)
    return error.details.map((detail) => ({
      message: detail.message,
      extensions: { code: "VALIDATION_FAILED", path: detail.path },
    }));
  if (error instanceof AppError)
    return [{ message: error.message, extensions: { code: error.code.toUpperCase() } }];
  return [{ message: "internal error", extensions: { code: "INTERNAL_SERVER_ERROR" } }];
}

export function createLiveConnection(deps: LiveConnectionDeps) {
  const { socket, hub, limits, log } = deps;
  let state = initialState(deps.protocol, limits.maxSubscriptionsPerConnection);
  let principal: Principal | null = null;
  let done = false;
  const initTimer = setTimeout(() => apply({ type: "init-timeout" }), limits.initTimeoutMs);

  const handle: LiveSubscriberConnection = {
    deliver: (id, payload) => apply({ type: "event", id, payload }),
    revoke: (message) => apply({ type: "token-invalid", message }),
    shutdown: () => apply({ type: "shutdown" }),
    keepAlive: () => apply({ type: "keep-alive" }),
  };

  function apply(input: MachineInput): void {
    const stepped = step(state, input);
    state = stepped.state;
    for (const action of stepped.actions) perform(action);
  }

  function finish(): void {
    if (done) return;
    done = true;
    clearTimeout(initTimer);
    hub.release(handle);
    deps.onClosed(connection);
  }

  function send(message: Record<string, unknown>): void {
    if (done) return;
    const text = JSON.stringify(message);
    if (socket.getBufferedAmount() + text.length > limits.maxBufferedBytes) {
      apply({ type: "slow-client" });
      return;
    }
    socket.send(text);
    deps.onSent?.();
  }

  function perform(action: MachineAction): void {
    switch (action.type) {
      case "send":
        send(action.message);
        break;
      case "close":
        if (done) break;
        socket.close(action.code, fitReason(action.reason));
        finish();
        break;
      case "authenticate":
        clearTimeout(initTimer);
        void authenticate(action.authorization ?? deps.upgradeAuthorization);
        break;
      case "subscribe":
        void subscribe(action.id, action.request);
        break;
      case "unsubscribe":
        hub.unsubscribe(handle, action.id);
        break;
    }
  }

  async function authenticate(header: string | null): Promise<void> {
    if (!header) {
      const message = "no token: send Authorization: Bearer <token> in connection_init's payload";
      return apply({ type: "auth-failed", cause: CLOSE.unauthorized, message });
    }
    try {
      const found = await deps.authenticate(header);
      if (done) return;
      if (!(await hub.admit(handle, { tenantId: found.tenantId, tokenId: found.tokenId }))) {
        const message = "the token holds the most connections allowed";
        return apply({ type: "auth-failed", cause: CLOSE.tooManyConnections, message });
      }
      principal = found;
      // Closed while the hub admitted it: let it go again.
      if (done) return hub.release(handle);
      apply({ type: "authenticated" });
    } catch (error) {
      if (error instanceof UnauthorizedError)
        return apply({ type: "auth-failed", cause: CLOSE.forbidden, message: error.message });
      log.error("live connection could not authenticate", describeError(error));
      apply({ type: "auth-failed", cause: CLOSE.internalError, message: "authentication failed" });
    }
  }

  async function subscribe(id: string, request: SubscribeRequest): Promise<void> {
    const tenantId = (principal as Principal).tenantId;
    try {
      const subscription = await deps.compile(tenantId, request);
      if (state.subscriptions.has(id)) hub.subscribe(handle, id, subscription);
    } catch (error) {
      if (!(error instanceof AppError))
        log.error("live subscription could not be compiled", describeError(error));
      apply({ type: "subscribe-failed", id, errors: wireErrors(error) });
    }
  }

  const connection = {
    /** A message from the client, as the socket decoded it. */
    receive: (raw: unknown) => apply({ type: "message", raw }),
    /** The socket closed (the client went, or a close this shell sent completed). */
    closed: () => finish(),
    handle,
  };
  return connection;
}
