/**
 * Secret config variables never reach the delivery log, its API or the
 * dispatcher's log lines: the API and a dispatcher in-process over one store,
 * webhooks whose host, path and header are rendered from secret variables,
 * and destinations that fail in every way that quotes the URL or the request
 * (unresolvable host, refused address, a receiver echoing path and header,
 * a redirect echoing the path).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger } from "../../common/log.ts";
import { loadDispatcherConfig } from "../../dispatcher/config.ts";
import { type OpenDispatcher, openDispatcher } from "../../dispatcher/open-dispatcher.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { eventually } from "../support/eventually.ts";
import { graphqlClient } from "../support/graphql.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";

/** Secret values, each with a fragment no placeholder or message contains. */
const SECRETS = {
  HOOK_HOST: "Hook-Secret-7f3a",
  PATH_TOKEN: "p@th Secret-42",
  HEADER_KEY: "hdr-Secret-99",
};
const FRAGMENTS = ["7f3a", "secret-42", "secret%2042", "secret-99"];

let t: TestApp;
let acme: ProvisionedTenant;
let receiver: Receiver;
let dispatcher: OpenDispatcher;
const logLines: string[] = [];

beforeAll(async () => {
  t = await createTestApp({ FEED_POLL_MS: "20" });
  acme = await t.provision("acme");
  // Every request: 500 echoing the path and the X-Key header; its retry: a redirect echoing the path.
  receiver = startReceiver((request, i) =>
    i % 2 === 0
      ? new Response(`no route ${request.path} for key ${request.headers["x-key"]}`, { status: 500 })
      : new Response(null, { status: 302, headers: { location: `https://elsewhere.test${request.path}` } }),
  );
  const config = loadDispatcherConfig({
    ...t.storeEnv,
    REDIS_URL: t.redis.url,
    REDIS_PREFIX: t.redis.prefix,
    DELIVERY_ALLOW_HTTP: "true",
    DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8",
    DELIVERY_RETRY_SCHEDULE: "30ms",
  });
  dispatcher = await openDispatcher(config, {
    redis: t.redis.redis,
    log: createLogger("debug", {}, (line) => logLines.push(line)),
    // `*.refused.test` resolves to a private address; every other name (the secret host) to nothing.
    lookupHost: async (host) => {
      if (host.endsWith(".refused.test")) return ["10.9.8.7"];
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    },
  });
  await dispatcher.ready();
  t.feed.start();
});
afterAll(async () => {
  await dispatcher.close(1000);
  await receiver.stop();
  await t.close();
});

const admin = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: acme.adminToken, body });

type Attempt = { statusCode: number | null; responseBody: string | null; error: string | null };
type Delivery = { status: string; attempts: Attempt[] };

/** The fragments of secret values found in `text`, in any letter case. */
const leaked = (text: string) => FRAGMENTS.filter((fragment) => text.toLowerCase().includes(fragment));

test("no delivery-log field, API answer or log line holds a secret value", async () => {
  for (const [key, value] of Object.entries(SECRETS)) {
    const set = await admin("POST", "/configuration/extension", { key, value, configType: "secret" });
    expect(set.status).toBeLessThan(300);
  }
  const hooks = {
    unresolved: `http://{{ HOOK_HOST }}.example.test/x`,
    refused: `http://{{ HOOK_HOST }}.refused.test/x`,
    echoed: `${receiver.url}/hooks/{{ PATH_TOKEN }}`,
  };
  const ids: Record<string, string> = {};
  for (const [name, url] of Object.entries(hooks)) {
    const created = await admin("POST", "/webhooks", {
      name,
      url,
      type: "graphql",
      query: "subscription { schemaRegions { operation data { Name } } }",
      headers: { "X-Key": "{{ HEADER_KEY }}" },
    });
    expect(created.status).toBe(201);
    ids[name] = created.body.result.id;
  }
  await graphqlClient(
    t,
    acme.adminToken,
  )(`mutation { schema { insertRegions(input: {Name: "North", Timezone: "UTC"}) } }`);

  const answers: Record<string, { text: string; delivery: Delivery }> = {};
  await eventually(
    async () => {
      for (const [name, id] of Object.entries(ids)) {
        const answer = await admin("GET", `/webhooks/${id}/deliveries`);
        const delivery = answer.body.result[0] as Delivery | undefined;
        expect(delivery?.status).toBe("failed");
        answers[name] = { text: JSON.stringify(answer.body), delivery: delivery as Delivery };
      }
    },
    { timeoutMs: 10_000 },
  );

  // The receiver did get the secrets: they were sent, only not logged.
  expect(receiver.requests.map((r) => r.headers["x-key"])).toEqual([SECRETS.HEADER_KEY, SECRETS.HEADER_KEY]);
  expect(receiver.requests[0]?.path).toBe("/hooks/p@th%20Secret-42");

  // Each failure is told, with the placeholder where the value was.
  expect(answers.unresolved?.delivery.attempts.map((a) => a.error)).toEqual([
    "cannot resolve {{ HOOK_HOST }}.example.test (ENOTFOUND)",
    "gave up after 2 attempts: cannot resolve {{ HOOK_HOST }}.example.test (ENOTFOUND)",
  ]);
  expect(answers.refused?.delivery.attempts.map((a) => a.error)).toEqual([
    "destination refused: {{ HOOK_HOST }}.refused.test resolves to 10.9.8.7 is a private address",
  ]);
  const echoed = answers.echoed?.delivery.attempts ?? [];
  expect(echoed.map((a) => a.statusCode)).toEqual([500, 302]);
  expect(echoed[0]?.responseBody).toBe("no route /hooks/{{ PATH_TOKEN }} for key {{ HEADER_KEY }}");
  expect(echoed[1]?.error).toBe(
    "gave up after 2 attempts: HTTP 302: redirect not followed (to https://elsewhere.test/hooks/{{ PATH_TOKEN }})",
  );

  for (const { text } of Object.values(answers)) expect(leaked(text)).toEqual([]);
  expect(logLines.length).toBeGreaterThan(0);
  expect(logLines.filter((line) => leaked(line).length > 0)).toEqual([]);
  // The queue keeps each failed job's reason too.
  const reasons: string[] = [];
  for (const key of await t.redis.redis.keys(`${t.redis.prefix}:bull:deliveries:*`)) {
    if ((await t.redis.redis.type(key)) !== "hash") continue;
    const reason = await t.redis.redis.hget(key, "failedReason");
    if (reason) reasons.push(reason);
  }
  expect(reasons).toHaveLength(3);
  expect(reasons.filter((reason) => leaked(reason).length > 0)).toEqual([]);
}, 20_000);
