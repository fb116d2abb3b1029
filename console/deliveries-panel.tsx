/**
 * One webhook's deliveries (`GET /webhooks/{id}/deliveries`), newest first, refreshed every few
 * seconds: status, attempts, what the receiver answered last; each attempt on demand; a button to
 * deliver one again (`POST /webhooks/{id}/deliveries/{deliveryId}/retry`).
 */
import { useState } from "react";
import { type ApiClient, ApiError } from "./api-client.ts";
import type { Delivery, Webhook } from "./api-types.ts";
import { attemptAnswer, excerpt, formatInstant } from "./format.ts";
import { useApiData } from "./use-api-data.ts";

const REFRESH_MS = 3000;

export function DeliveriesPanel({ api, webhook }: { api: ApiClient; webhook: Webhook }) {
  const path = `/webhooks/${encodeURIComponent(webhook.id)}/deliveries`;
  const deliveries = useApiData(() => api.get<Delivery[]>(`${path}?limit=50`), webhook.id, REFRESH_MS);
  const [notice, setNotice] = useState<{ text: string; error: boolean } | null>(null);
  const [retrying, setRetrying] = useState<string | null>(null);

  async function retry(delivery: Delivery) {
    setRetrying(delivery.id);
    setNotice(null);
    try {
      await api.post(`${path}/${encodeURIComponent(delivery.id)}/retry`);
      setNotice({ text: `Delivery ${delivery.id} is queued again.`, error: false });
      deliveries.reload();
    } catch (failure) {
      setNotice({ text: failure instanceof ApiError ? failure.message : String(failure), error: true });
    } finally {
      setRetrying(null);
    }
  }

  return (
    <section className="card deliveries" aria-label={`Deliveries of ${webhook.name}`}>
      <header className="card-header">
        <div>
          <h2>{webhook.name}</h2>
          <p className="muted mono">{webhook.url}</p>
        </div>
        <button type="button" onClick={deliveries.reload} disabled={deliveries.loading}>
          Refresh
        </button>
      </header>
      {!webhook.enabled && (
        <p className="banner banner-warn">
          Disabled{webhook.disabledReason ? `: ${webhook.disabledReason}` : ""}. Deliveries cannot be retried.
        </p>
      )}
      {notice && <p className={`banner ${notice.error ? "banner-error" : "banner-ok"}`}>{notice.text}</p>}
      {deliveries.error && <p className="banner banner-error">{deliveries.error.message}</p>}
      {deliveries.data?.length === 0 && <p className="muted empty">No deliveries yet.</p>}
      {deliveries.data && deliveries.data.length > 0 && (
        <table className="deliveries-table">
          <thead>
            <tr>
              <th>Created</th>
              <th>Status</th>
              <th className="num">Attempts</th>
              <th>Last answer</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {deliveries.data.map((delivery) => (
              <DeliveryRow
                key={delivery.id}
                delivery={delivery}
                retrying={retrying === delivery.id}
                canRetry={webhook.enabled}
                onRetry={() => void retry(delivery)}
              />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

interface DeliveryRowProps {
  delivery: Delivery;
  retrying: boolean;
  canRetry: boolean;
  onRetry: () => void;
}

function DeliveryRow({ delivery, retrying, canRetry, onRetry }: DeliveryRowProps) {
  const last = delivery.attempts[delivery.attempts.length - 1];
  return (
    <tr data-delivery-id={delivery.id}>
      <td className="nowrap">{formatInstant(delivery.createdAt)}</td>
      <td>
        <span className={`badge badge-${delivery.status}`}>{delivery.status}</span>
      </td>
      <td className="num">{delivery.attemptCount}</td>
      <td className="answer">
        {last ? (
          <details>
            <summary>
              <span className="code">{last.statusCode ?? "—"}</span>{" "}
              <span className="mono">{excerpt(attemptAnswer(last), 80)}</span>
            </summary>
            <ol className="attempts">
              {delivery.attempts.map((attempt) => (
                <li key={attempt.attempt}>
                  <span className="muted">
                    #{attempt.attempt} · {formatInstant(attempt.at)} · {attempt.durationMs} ms ·{" "}
                  </span>
                  <span className="code">{attempt.statusCode ?? "no answer"}</span>
                  <pre>{excerpt(attemptAnswer(attempt), 600)}</pre>
                </li>
              ))}
            </ol>
          </details>
        ) : (
          <span className="muted">not tried yet</span>
        )}
      </td>
      <td className="actions">
        <button type="button" onClick={onRetry} disabled={retrying || !canRetry}>
          {retrying ? "Retrying…" : "Retry"}
        </button>
      </td>
    </tr>
  );
}
