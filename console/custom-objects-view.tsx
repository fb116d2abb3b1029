/** The tenant's custom objects and their fields (`GET /custom/schemas`). */
import type { ApiClient } from "./api-client.ts";
import type { CustomField, CustomObject } from "./api-types.ts";
import { useApiData } from "./use-api-data.ts";

export function CustomObjectsView({ api }: { api: ApiClient }) {
  const objects = useApiData(() => api.get<CustomObject[]>("/custom/schemas"), "custom-objects");
  return (
    <div className="stack">
      <header className="page-header">
        <h2>Custom objects</h2>
        <button type="button" onClick={objects.reload} disabled={objects.loading}>
          Refresh
        </button>
      </header>
      {objects.error && <p className="banner banner-error">{objects.error.message}</p>}
      {objects.data?.length === 0 && <p className="muted empty">This tenant has no custom objects.</p>}
      {objects.data?.map((object) => (
        <section key={object.schema.id} className="card" aria-label={object.schema.name}>
          <header className="card-header">
            <div>
              <h3>{object.schema.name}</h3>
              {(object.schema.label || object.schema.description) && (
                <p className="muted">
                  {[object.schema.label, object.schema.description].filter(Boolean).join(" — ")}
                </p>
              )}
            </div>
            <span className="muted">{object.fields.length} fields</span>
          </header>
          <table>
            <thead>
              <tr>
                <th>Field</th>
                <th>Type</th>
                <th>Rules</th>
                <th>Label</th>
              </tr>
            </thead>
            <tbody>
              {object.fields.map((field) => (
                <tr key={field.id}>
                  <td className="mono">{field.name}</td>
                  <td className="mono">{fieldType(field)}</td>
                  <td>{fieldRules(field)}</td>
                  <td className="muted">{field.label ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}
    </div>
  );
}

function fieldType(field: CustomField): string {
  if (field.referenceSchemaName) return `${field.fieldType} → ${field.referenceSchemaName}`;
  if (field.precision !== null) return `${field.fieldType}(${field.precision}, ${field.scale ?? 0})`;
  if (field.maxLength !== null) return `${field.fieldType}(${field.maxLength})`;
  return field.fieldType;
}

function fieldRules(field: CustomField): string {
  const rules = [
    field.required && "required",
    field.upsertKey && "upsert key",
    field.readOnly && "read-only",
  ];
  return rules.filter(Boolean).join(", ");
}
