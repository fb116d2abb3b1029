/**
 * Webhooks as deployable artifacts: a command-line client of the REST API
 * (`npm run webhooks -- <command>`). Deploys a webhook from a JSON file
 * of any kind (graphql, graphql_deferred, scheduled; create, or replace the one
 * with the same name, its kind too), lists, deletes, sets config variables,
 * rotates a signing secret, sends a test delivery, enables a webhook a 410 Gone
 * disabled and lists its deliveries. Talks HTTP only: SERVICE_URL and SERVICE_TOKEN.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { z } from "zod";
import { emptyAsUndefined, loadConfig } from "../../common/load-config.ts";

export const WEBHOOK_TOOL_USAGE = `usage: npm run webhooks -- <command>   (env: SERVICE_URL, SERVICE_TOKEN)
  deploy <file.json>                 create the webhook, or replace the one with the same name
  list                               one line per webhook: id, name, url, enabled, kind (graphql,
                                     graphql_deferred <field>+<offset>, scheduled <cron>)
  delete <name-or-id>
  set-var <KEY> <value> [--secret] [--description <text>]
  rotate-secret <name-or-id> [--grace <seconds>]   new signing secret; the old one signs too for the
                                     grace period (default 86400)
  test <name-or-id>                  send a signed example delivery
  enable <name-or-id>                enable a webhook a 410 Gone disabled
  deliveries <name-or-id> [--status <pending|delivering|succeeded|failed>] [--limit <n>]
                                     newest first: id, created, status, attempts, test`;

export const WebhookToolConfigSchema = z.object({
  SERVICE_URL: z.preprocess(emptyAsUndefined, z.string().url().default("http://127.0.0.1:3000")),
  SERVICE_TOKEN: z.string().min(1, "set SERVICE_TOKEN to an administrator token"),
});

type Call = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Record<string, unknown> }>;

/** A JSON client of the service. */
export function serviceClient(baseUrl: string, token: string): Call {
  return async (method, path, body) => {
    const response = await fetch(new URL(path, baseUrl), {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
}

interface WebhookView {
  id: string;
  name: string;
  url: string;
  enabled: boolean;
  type: string;
  cron?: string;
  field?: string;
  offset?: number | { field: string; default?: number };
}

/** The kind column of `list`: the type, and when it fires for the deferred and scheduled kinds. */
function kindOf(w: WebhookView): string {
  if (w.type === "scheduled") return `scheduled ${w.cron}`;
  if (w.type !== "graphql_deferred") return w.type;
  const offset = typeof w.offset === "object" ? w.offset.field : `${w.offset}ms`;
  return `graphql_deferred ${w.field}+${offset}`;
}

interface DeliveryView {
  id: string;
  createdAt: string;
  status: string;
  attemptCount: number;
  test: boolean;
}

/** Runs one command. @returns the lines to print. @throws Error with the service's message. */
export async function runWebhookTool(argv: string[], call: Call): Promise<string[]> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      secret: { type: "boolean" },
      description: { type: "string" },
      grace: { type: "string" },
      status: { type: "string" },
      limit: { type: "string" },
    },
  });
  const [command, first, second] = positionals;
  const expectOk = (answer: Awaited<ReturnType<Call>>) => {
    if (answer.status >= 300) {
      const details = (answer.body.details as { path: string; message: string }[] | undefined) ?? [];
      throw new Error(
        [String(answer.body.message), ...details.map((d) => `  ${d.path}: ${d.message}`)].join("\n"),
      );
    }
    return answer.body.result;
  };
  const webhooks = async () => expectOk(await call("GET", "/webhooks")) as WebhookView[];
  const target = async () => {
    const found = (await webhooks()).find((w) => w.id === first || w.name === first);
    if (!found) throw new Error(`no webhook named or with id '${first ?? ""}'`);
    return found;
  };

  switch (command) {
    case "deploy": {
      if (!first) throw new Error("deploy needs a JSON file");
      const definition = JSON.parse(readFileSync(first, "utf8")) as { name?: string };
      const existing = (await webhooks()).find(
        (w) => w.name.toLowerCase() === String(definition.name).toLowerCase(),
      );
      if (existing) {
        expectOk(await call("PUT", `/webhooks/${existing.id}`, definition));
        return [`replaced ${existing.name} (${existing.id})`];
      }
      const created = expectOk(await call("POST", "/webhooks", definition)) as WebhookView & {
        secret: string;
      };
      return [`created ${created.name} (${created.id})`, `signing secret (shown once): ${created.secret}`];
    }
    case "list":
      return (await webhooks()).map(
        (w) => `${w.id}\t${w.name}\t${w.url}\t${w.enabled ? "enabled" : "disabled"}\t${kindOf(w)}`,
      );
    case "delete": {
      const webhook = await target();
      expectOk(await call("DELETE", `/webhooks/${webhook.id}`));
      return [`deleted ${webhook.name} (${webhook.id})`];
    }
    case "rotate-secret": {
      const webhook = await target();
      // Checked by the service (an integer within bounds): a wrong value comes back as its message.
      const body = values.grace === undefined ? {} : { graceSeconds: Number(values.grace) };
      const { secret } = expectOk(await call("POST", `/webhooks/${webhook.id}/secret/rotate`, body)) as {
        secret: string;
      };
      return [`new signing secret (shown once): ${secret}`];
    }
    case "test": {
      const webhook = await target();
      const { id } = expectOk(await call("POST", `/webhooks/${webhook.id}/test`)) as { id: string };
      return [`test delivery ${id} queued for ${webhook.name}`];
    }
    case "enable": {
      const webhook = await target();
      expectOk(await call("POST", `/webhooks/${webhook.id}/enable`));
      return [`${webhook.name} is enabled`];
    }
    case "deliveries": {
      const webhook = await target();
      const query = new URLSearchParams();
      if (values.status !== undefined) query.set("status", values.status);
      if (values.limit !== undefined) query.set("limit", values.limit);
      const listed = expectOk(
        await call("GET", `/webhooks/${webhook.id}/deliveries?${query}`),
      ) as DeliveryView[];
      return listed.map((d) =>
        [
          d.id,
          d.createdAt,
          d.status,
          `${d.attemptCount} attempt${d.attemptCount === 1 ? "" : "s"}`,
          ...(d.test ? ["test"] : []),
        ].join("\t"),
      );
    }
    case "set-var": {
      if (!first || second === undefined) throw new Error("set-var needs a KEY and a value");
      const configType = values.secret ? "secret" : "plain-text";
      expectOk(
        await call("POST", "/configuration/extension", {
          key: first,
          value: second,
          configType,
          description: values.description,
        }),
      );
      return [`set ${first} (${configType})`];
    }
    default:
      throw new Error(command ? `unknown command '${command}'\n${WEBHOOK_TOOL_USAGE}` : WEBHOOK_TOOL_USAGE);
  }
}

if (import.meta.main) {
  try {
    const config = loadConfig(WebhookToolConfigSchema, process.env);
    for (const line of await runWebhookTool(
      process.argv.slice(2),
      serviceClient(config.SERVICE_URL, config.SERVICE_TOKEN),
    ))
      console.log(line);
  } catch (error) {
    console.error(`webhooks: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
