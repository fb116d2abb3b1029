/**
 * The live-subscription feature of one API process: opens a connection per socket (the protocol
 * machine behind its shell), compiles subscriptions against the tenant's schema (the webhooks'
 * parser and selection bound), holds them in the hub the fan-out matches against, sends the
 * keep-alives, re-checks the held tokens and closes every socket on shutdown (1001).
 */
import { ValidationError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import type { Registry } from "../../common/metrics.ts";
import type { AuthService } from "../auth/auth-service.ts";
import type { CatalogueService } from "../catalogue/catalogue-service.ts";
import type { SchemaCache } from "../graphql/schema/schema-cache.ts";
import type { Store } from "../store/store.ts";
import { parseSubscription } from "../subscriptions/parse-subscription.ts";
import { selectionProblems } from "../subscriptions/selection-limits.ts";
import type { Subscription } from "../subscriptions/subscription.ts";
import type { LiveProtocol, SubscribeRequest } from "./client-message.ts";
import {
  createLiveConnection,
  type LiveConnection,
  type LiveLimits,
  type LiveSocket,
} from "./live-connection.ts";
import type { createLiveFanout } from "./live-fanout.ts";
import { createLiveHub } from "./live-hub.ts";
import { registerLiveMetrics } from "./live-metrics.ts";
import { startTokenRecheck } from "./token-recheck.ts";

export interface LiveSettings extends LiveLimits {
  maxConnectionsPerToken: number;
  keepAliveMs: number;
  authRecheckMs: number;
  /** WEBHOOK_MAX_SELECTION_FIELDS: the same bound on a live subscription's selection. */
  maxSelectionFields: number;
}

export interface LiveServiceDeps {
  store: Store;
  auth: AuthService;
  catalogues: CatalogueService;
  schemas: SchemaCache;
  fanout: ReturnType<typeof createLiveFanout>;
  settings: LiveSettings;
  log: Logger;
  metrics: Registry;
}

export type LiveService = ReturnType<typeof createLiveService>;

export function createLiveService(deps: LiveServiceDeps) {
  const { store, auth, catalogues, schemas, fanout, settings, log } = deps;
  const hub = createLiveHub(settings.maxConnectionsPerToken, {
    tenantWatched: (tenantId) => fanout.watch(tenantId),
    tenantUnwatched: (tenantId) => fanout.unwatch(tenantId),
  });
  fanout.attach(hub);
  const metrics = registerLiveMetrics(deps.metrics, hub.counts);
  const open = new Set<LiveConnection>();
  let stopRecheck: (() => void) | null = null;
  let keepAlive: ReturnType<typeof setInterval> | null = null;

  async function compile(tenantId: string, request: SubscribeRequest): Promise<Subscription> {
    const catalogue = await catalogues.get(tenantId);
    const subscription = parseSubscription(request.query, schemas.get(catalogue).schema, catalogue);
    const problems = selectionProblems(subscription, settings.maxSelectionFields);
    if (problems.length > 0) throw new ValidationError("the subscription is invalid", problems);
    return subscription;
  }

  return {
    /** Starts the keep-alives and the token re-check (main.ts and tests that hold sockets). */
    start(): void {
      stopRecheck ??= startTokenRecheck(store, hub, settings.authRecheckMs, log);
      keepAlive ??= setInterval(() => {
        for (const connection of open) connection.handle.keepAlive();
      }, settings.keepAliveMs);
    },
    /** A connection for a socket that speaks `protocol`. */
    connect(protocol: LiveProtocol, socket: LiveSocket, upgradeAuthorization: string | null): LiveConnection {
      const closingSocket: LiveSocket = {
        send: (text) => socket.send(text),
        getBufferedAmount: () => socket.getBufferedAmount(),
        close(code, reason) {
          metrics.closed(code);
          socket.close(code, reason);
        },
      };
      const connection = createLiveConnection({
        protocol,
        socket: closingSocket,
        upgradeAuthorization,
        authenticate: (header) => auth.authenticate(header),
        compile,
        hub,
        limits: settings,
        log,
        onClosed: (done) => open.delete(done),
        onSent: metrics.sent,
      });
      open.add(connection);
      return connection;
    },
    /** Closes a socket that offered neither subprotocol. */
    refuse(socket: LiveSocket, code: number, reason: string): void {
      metrics.closed(code);
      socket.close(code, reason);
    },
    counts: hub.counts,
    /** Closes every socket (1001) and stops the timers. */
    shutdown(): void {
      stopRecheck?.();
      if (keepAlive) clearInterval(keepAlive);
      stopRecheck = null;
      keepAlive = null;
      for (const connection of [...open]) connection.handle.shutdown();
    },
  };
}
