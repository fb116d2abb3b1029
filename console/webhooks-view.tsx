/** The tenant's webhooks (`GET /webhooks`) on the left; the chosen one's deliveries on the right. */
import { useState } from "react";
import type { ApiClient } from "./api-client.ts";
import type { Webhook } from "./api-types.ts";
import { DeliveriesPanel } from "./deliveries-panel.tsx";
import { useApiData } from "./use-api-data.ts";

export function WebhooksView({ api }: { api: ApiClient }) {
  const webhooks = useApiData(() => api.get<Webhook[]>("/webhooks"), "webhooks");
  const [chosenId, setChosenId] = useState<string | null>(null);
  const list = webhooks.data ?? [];
  const chosen = list.find((webhook) => webhook.id === chosenId) ?? list[0] ?? null;

  return (
    <div className="split">
      <section className="card webhook-list" aria-label="Webhooks">
        <header className="card-header">
          <h2>Webhooks</h2>
          <button type="button" onClick={webhooks.reload} disabled={webhooks.loading}>
            Refresh
          </button>
        </header>
        {webhooks.error && <p className="banner banner-error">{webhooks.error.message}</p>}
        {webhooks.data?.length === 0 && <p className="muted empty">No webhooks yet.</p>}
        <ul>
          {list.map((webhook) => (
            <li key={webhook.id}>
              <button
                type="button"
                className={`webhook-item${webhook.id === chosen?.id ? " chosen" : ""}`}
                aria-pressed={webhook.id === chosen?.id}
                onClick={() => setChosenId(webhook.id)}
              >
                <span className="webhook-name">{webhook.name}</span>
                <span className={`badge ${webhook.enabled ? "badge-succeeded" : "badge-failed"}`}>
                  {webhook.enabled ? "enabled" : "disabled"}
                </span>
                <span className="muted mono webhook-url">{webhook.url}</span>
              </button>
            </li>
          ))}
        </ul>
      </section>
      {chosen ? (
        <DeliveriesPanel api={api} webhook={chosen} />
      ) : (
        <section className="card deliveries">
          <p className="muted empty">Choose a webhook to see its deliveries.</p>
        </section>
      )}
    </div>
  );
}
