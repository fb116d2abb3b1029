/**
 * The live subscriptions' families: connections and subscriptions held by this process (read at
 * scrape time from the hub), messages sent, and closes by code (a low-cardinality label: the
 * codes of close-codes.ts).
 */
import { Counter, Gauge } from "prom-client";
import type { Registry } from "../../common/metrics.ts";

export interface LiveMetrics {
  sent(): void;
  closed(code: number): void;
}

export function registerLiveMetrics(
  registry: Registry,
  counts: () => { connections: number; subscriptions: number },
): LiveMetrics {
  new Gauge({
    name: "live_connections",
    help: "Authenticated live-subscription WebSocket connections held by this process.",
    registers: [registry],
    collect() {
      this.set(counts().connections);
    },
  });
  new Gauge({
    name: "live_subscriptions",
    help: "Live subscriptions held by this process's connections.",
    registers: [registry],
    collect() {
      this.set(counts().subscriptions);
    },
  });
  const sent = new Counter({
    name: "live_messages_sent_total",
    help: "Messages sent on live-subscription connections.",
    registers: [registry],
  });
  const closes = new Counter({
    name: "live_closes_total",
    help: "Live-subscription connections closed by the server, by close code.",
    labelNames: ["code"],
    registers: [registry],
  });
  return { sent: () => sent.inc(), closed: (code) => closes.inc({ code: String(code) }) };
}
