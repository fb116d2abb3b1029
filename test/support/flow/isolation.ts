/**
 * Scenario 7, tenant isolation: tenant A builds up everything a tenant can own
 * (custom object and field, records of every standard object, webhook with a
 * delivery, config variables, a token); tenant B's administrator then calls
 * every endpoint and every GraphQL operation with A's ids and names. Each
 * answer must be B's own (not found, empty, null, or B's own namesake), no
 * answer may contain any of A's values, A's data must be as A left it, and
 * B's writes must never reach A's webhook.
 */
import { type Receiver, startReceiver } from "../receiver.ts";
import { startService } from "../service-processes.ts";
import { type ApiAnswer, type ApiClient, apiClient } from "./api-client.ts";
import { FAST_DISPATCHER_ENV } from "./scenario.ts";

const STANDARD = [
  "Regions",
  "Accounts",
  "Contacts",
  "Users",
  "Resources",
  "Jobs",
  "JobAllocations",
  "Availabilities",
];
const lowerFirst = (name: string) => name.charAt(0).toLowerCase() + name.slice(1);

interface Probe {
  label: string;
  /** What B sends (path and body): A's values B itself sent are not leaks when echoed back. */
  sent: string;
  call: () => Promise<ApiAnswer>;
  /** Why the answer is wrong, or null. */
  wrong: (answer: ApiAnswer) => string | null;
}

const notFound = (answer: ApiAnswer) => (answer.status === 404 ? null : `answered ${answer.status}, not 404`);
const status =
  (...allowed: number[]) =>
  (answer: ApiAnswer) =>
    allowed.includes(answer.status) ? null : `answered ${answer.status}, not ${allowed.join(" or ")}`;
const gqlNull = (field: string) => (answer: ApiAnswer) =>
  answer.status === 200 && answer.body?.data?.[field] === null ? null : `expected ${field}: null`;
const gqlEmpty = (field: string) => (answer: ApiAnswer) =>
  answer.status === 200 && answer.body?.data?.[field]?.edges?.length === 0 ? null : `expected no ${field}`;
const gqlError = (code: string) => (answer: ApiAnswer) =>
  answer.status === 200 && answer.body?.data === null && answer.body?.errors?.[0]?.extensions?.code === code
    ? null
    : `expected ${code}`;

export async function isolation() {
  const service = await startService({ dispatcherEnv: FAST_DISPATCHER_ENV });
  const receiver: Receiver = startReceiver();
  try {
    const a = apiClient(service.base, service.token);
    const alpha = await buildTenantA(a, receiver);
    const created = await service.admin(["create-tenant", "bravo", "--admin", "bob"]);
    const b = apiClient(service.base, created.trim().split("\n").at(-1) ?? "");
    const failures: string[] = [];
    const fail = (text: string) => {
      if (failures.length < 30) failures.push(text);
    };
    const secrets = Object.values(alpha.marks).filter((v) => v.length >= 8);
    const probes = probesOf(b, alpha, receiver);
    for (const probe of probes) {
      const answer = await probe.call();
      const why = probe.wrong(answer);
      if (why) fail(`${probe.label}: ${why}: ${answer.text.slice(0, 200)}`);
      const leaked = secrets.filter((s) => answer.text.includes(s) && !probe.sent.includes(s));
      if (leaked.length > 0) fail(`${probe.label}: the answer holds tenant A's ${leaked.join(", ")}`);
    }
    // B wrote records that A's webhook would match: none may reach A's receiver; A's own two writes do.
    await a.graphql(`mutation { schema { insertRegions(input: {Name: "Alpha later", Timezone: "UTC"}) } }`);
    const atAlpha = () =>
      new Set(
        receiver.requests.filter((r) => r.path === "/alpha").map((r) => r.headers["service-request-id"]),
      );
    const deadline = Date.now() + 10_000;
    while (atAlpha().size < 2 && Date.now() < deadline) await Bun.sleep(50);
    await Bun.sleep(500);
    const fromB = receiver.requests.filter((r) => r.path === "/alpha" && r.body.includes("Bravo")).length;
    if (atAlpha().size !== 2) fail(`A's webhook got ${atAlpha().size} deliveries, A made 2 matching writes`);
    if (fromB > 0) fail("B's change reached A's webhook");
    if (!receiver.requests.some((r) => r.path === "/bravo" && r.body.includes("Bravo North")))
      fail("B's own webhook did not get B's change");
    // A's view is as A left it.
    const check = await a.graphql(
      `{ regionsById(UID: "${alpha.marks.regionId}") { Name } alphaThing(filter: "Code == 'alpha-code'") { edges { node { Secret } } } }`,
    );
    if ((check.data?.regionsById as { Name?: string } | null)?.Name !== "Alpha North")
      fail(`A's region changed: ${JSON.stringify(check)}`);
    const things =
      (check.data?.alphaThing as { edges: { node: { Secret: string } }[] } | undefined)?.edges ?? [];
    if (things.length !== 1 || things[0]?.node.Secret !== "alpha-thing-secret")
      fail(`A's custom record changed: ${JSON.stringify(check)}`);
    for (const [label, path] of [
      ["A's variable", "/configuration/extension/ALPHA_PLAIN"],
      ["A's webhook", `/webhooks/${alpha.marks.hookId}`],
    ] as const) {
      const answer = await a.request("GET", path);
      if (answer.status !== 200) fail(`${label} is gone for A: ${answer.status}`);
      if (label === "A's variable" && answer.body.result.value !== "alpha-plain-value")
        fail("A's variable changed");
    }
    const aTokens = await a.request("GET", "/auth/tokens");
    if (!aTokens.text.includes(alpha.marks.jti ?? "-") || aTokens.text.includes('"revokedAt":"'))
      fail("A's token was revoked");
    return {
      name: "tenant isolation",
      setup: `tenant A with a custom object, a custom field on Contacts, records of every standard object, a webhook with a delivery, plain and secret config variables and a token; tenant B's administrator token against A's ids and names on every endpoint (${probes.length} calls, every GraphQL query and mutation of every object included)`,
      extra: {
        "calls made as tenant B": probes.length,
        "tenant A values looked for in every answer": secrets.length,
        "requests at A's webhook from B's writes": fromB,
      },
      failures,
    };
  } finally {
    await receiver.stop();
    await service.stop();
  }
}

async function buildTenantA(a: ApiClient, receiver: Receiver) {
  const must = (answer: ApiAnswer, label: string) => {
    if (answer.status >= 300) throw new Error(`${label}: ${answer.status} ${answer.text}`);
    return answer.body.result;
  };
  const object = must(
    await a.request("POST", "/custom/standalone/schemas", {
      body: {
        name: "AlphaThing",
        fields: [
          { name: "Code", column: { type: "string", unique: true } },
          { name: "Secret", column: { type: "string" } },
        ],
      },
    }),
    "AlphaThing",
  );
  const field = must(
    await a.request("POST", "/custom/standalone/fields", {
      body: {
        schemaName: "Contacts",
        name: "AlphaRef",
        column: { type: "reference", referenceSchemaName: "AlphaThing" },
      },
    }),
    "AlphaRef",
  );
  must(
    await a.request("POST", "/configuration/extension", {
      body: { key: "ALPHA_PLAIN", value: "alpha-plain-value" },
    }),
    "var",
  );
  must(
    await a.request("POST", "/configuration/extension", {
      body: { key: "ALPHA_SECRET", value: "alpha-secret-value", configType: "secret" },
    }),
    "secret",
  );
  const hook = must(
    await a.request("POST", "/webhooks", {
      body: {
        name: "alpha-hook",
        url: `${receiver.url}/alpha`,
        type: "graphql",
        headers: { "X-Alpha": "{{ ALPHA_SECRET }}" },
        query: "subscription { schemaRegions { operation data { UID Name } } }",
      },
    }),
    "hook",
  );
  const token = must(await a.request("POST", "/auth/token", { body: { roles: ["scheduler"] } }), "token");
  const written = await a.graphql(`mutation { schema {
    regionId: insertRegions(input: {Name: "Alpha North", Timezone: "UTC"}, idAlias: "r")
    accountId: insertAccounts(input: {Name: "Alpha Account"}, idAlias: "acc")
    thingId: insertAlphaThing(input: {Code: "alpha-code", Secret: "alpha-thing-secret"}, idAlias: "t")
    contactId: insertContacts(input: {LastName: "Alpha Contact", AccountId: "acc", AlphaRefId: "t"})
    resourceId: insertResources(input: {Name: "Alpha Resource", PrimaryRegionId: "r"}, idAlias: "res")
    jobId: insertJobs(input: {Duration: 30, RegionId: "r", Description: "Alpha Job"}, idAlias: "j")
    allocationId: insertJobAllocations(input: {JobId: "j", ResourceId: "res"})
    availabilityId: insertAvailabilities(input: {ResourceId: "res", Start: "2030-01-01T08:00:00Z", Finish: "2030-01-01T17:00:00Z"})
  } }`);
  if (written.errors) throw new Error(`tenant A's records: ${JSON.stringify(written.errors)}`);
  const ids = written.data?.schema as Record<string, string>;
  const users = await a.graphql("{ users { edges { node { UID } } } }");
  const userId =
    (users.data?.users as { edges: { node: { UID: string } }[] } | undefined)?.edges[0]?.node.UID ?? "";
  const whoami = await a.request("GET", "/auth/whoami");
  // Wait for the region's delivery, to have a delivery id of A's.
  let deliveryId = "";
  for (let i = 0; i < 200 && deliveryId === ""; i++) {
    const log = await a.request("GET", `/webhooks/${hook.id}/deliveries`);
    deliveryId = log.body.result?.[0]?.id ?? "";
    if (deliveryId === "") await Bun.sleep(50);
  }
  if (deliveryId === "") throw new Error("tenant A's delivery never appeared in the log");
  const objectByName = {
    Regions: ids.regionId,
    Accounts: ids.accountId,
    Contacts: ids.contactId,
    Users: userId,
    Resources: ids.resourceId,
    Jobs: ids.jobId,
    JobAllocations: ids.allocationId,
    Availabilities: ids.availabilityId,
  } as Record<string, string>;
  return {
    objectByName,
    thingId: ids.thingId as string,
    marks: {
      ...ids,
      userId,
      tenantId: whoami.body.result.tenantId as string,
      objectId: object.schema.id as string,
      fieldId: field.id as string,
      objectFieldId: object.fields.find((f: { name: string }) => f.name === "Secret")?.id as string,
      hookId: hook.id as string,
      hookSecret: hook.secret as string,
      deliveryId,
      jti: token.jti as string,
      token: token.token as string,
      plain: "alpha-plain-value",
      secret: "alpha-secret-value",
      thingSecret: "alpha-thing-secret",
      names: "Alpha North",
      account: "Alpha Account",
      contact: "Alpha Contact",
      job: "Alpha Job",
    } as Record<string, string>,
  };
}

type Alpha = Awaited<ReturnType<typeof buildTenantA>>;

function probesOf(b: ApiClient, alpha: Alpha, receiver: Receiver): Probe[] {
  const m = alpha.marks;
  const rest = (method: string, path: string, wrong: Probe["wrong"], body?: unknown): Probe => ({
    label: `${method} ${path}`,
    sent: `${path} ${JSON.stringify(body)}`,
    call: () => b.request(method, path, { body }),
    wrong,
  });
  const gql = (label: string, query: string, wrong: Probe["wrong"]): Probe => ({
    label,
    sent: query,
    call: () => b.request("POST", "/graphql/graphql", { body: { query } }),
    wrong,
  });
  const probes: Probe[] = [
    rest("GET", "/auth/whoami", (r) => (r.body?.result?.tenantId !== m.tenantId ? null : "B is A")),
    rest("GET", "/auth/tokens", status(200)),
    rest("DELETE", `/auth/token/${m.jti}`, notFound),
    rest("POST", "/auth/token", status(201), { roles: ["scheduler"] }),
    rest("GET", "/custom/schemas", status(200)),
    rest("POST", `/custom/standalone/track/${m.objectId}`, notFound),
    rest("DELETE", `/custom/standalone/track/${m.objectId}`, notFound),
    rest("POST", `/custom/standalone/schema/${m.objectId}/track`, notFound),
    rest("DELETE", `/custom/standalone/schema/${m.objectId}/track`, notFound),
    rest("DELETE", `/custom/standalone/schema/${m.objectId}`, notFound),
    rest("DELETE", `/custom/standalone/field/${m.fieldId}`, notFound),
    rest("DELETE", `/custom/standalone/field/${m.objectFieldId}`, notFound),
    rest("POST", "/custom/standalone/fields", status(400, 404), {
      schemaName: "AlphaThing",
      name: "Extra",
      column: { type: "string" },
    }),
    rest("POST", "/custom/standalone/fields", status(400, 404), {
      schemaName: "Contacts",
      name: "BravoRef",
      column: { type: "reference", referenceSchemaName: "AlphaThing" },
    }),
    rest("GET", "/configuration/extension", status(200)),
    rest("GET", "/configuration/extension/ALPHA_PLAIN", notFound),
    rest("GET", "/configuration/extension/ALPHA_SECRET", notFound),
    rest("DELETE", "/configuration/extension/ALPHA_PLAIN", notFound),
    rest("GET", "/graphql/schema", (r) =>
      r.status === 200 && !r.text.includes("AlphaThing") && !r.text.includes("AlphaRef")
        ? null
        : "A's object in B's schema",
    ),
    rest("GET", "/webhooks", status(200)),
    rest("GET", `/webhooks/${m.hookId}`, notFound),
    rest("PUT", `/webhooks/${m.hookId}`, notFound, {
      name: "alpha-hook",
      url: `${receiver.url}/stolen`,
      type: "graphql",
      query: "subscription { schemaRegions { operation } }",
    }),
    rest("GET", `/webhooks/${m.hookId}/deliveries`, notFound),
    rest("POST", `/webhooks/${m.hookId}/deliveries/${m.deliveryId}/retry`, notFound),
    rest("POST", `/webhooks/${m.hookId}/recover`, notFound, { since: "2020-01-01T00:00:00Z" }),
    rest(
      "POST",
      "/webhooks",
      (r) => (r.status === 400 && r.text.includes("ALPHA_SECRET") ? null : "A's variable usable by B"),
      {
        name: "steal",
        url: `${receiver.url}/stolen`,
        type: "graphql",
        headers: { "X-Steal": "{{ ALPHA_SECRET }}" },
        query: "subscription { schemaRegions { operation } }",
      },
    ),
    rest("POST", "/webhooks", status(400), {
      name: "alpha-object",
      url: `${receiver.url}/stolen`,
      type: "graphql",
      query: "subscription { schemaAlphaThing { operation data { Secret } } }",
    }),
    gql("introspection", "{ __schema { types { name fields { name } } } }", (r) =>
      r.text.includes("AlphaThing") || r.text.includes("AlphaRef") ? "A's types in B's schema" : null,
    ),
    gql("A's custom object", "{ alphaThing { edges { node { UID } } } }", (r) =>
      r.body?.errors ? null : "B can query A's object",
    ),
    gql("A's custom field", "{ contacts { edges { node { AlphaRefId } } } }", (r) =>
      r.body?.errors ? null : "B can read A's field",
    ),
    gql(
      `insert referencing A's region`,
      `mutation { schema { insertJobs(input: {Duration: 5, RegionId: "${m.regionId}"}) } }`,
      gqlError("REFERENCE_NOT_FOUND"),
    ),
    gql(
      "subquery over A's ids",
      `{ regions(filter: "UID IN (SELECT RegionId FROM Jobs WHERE Duration == 30)") { edges { node { UID } } } }`,
      gqlEmpty("regions"),
    ),
    gql(
      "lookup to A's names",
      `{ jobs(filter: "Region.Name == 'Alpha North'") { edges { node { UID } } } }`,
      gqlEmpty("jobs"),
    ),
    {
      label: "GET query of A's region",
      sent: m.regionId as string,
      call: () =>
        b.request(
          "GET",
          `/graphql/graphql?query=${encodeURIComponent(`{ regionsById(UID: "${m.regionId}") { Name } }`)}`,
        ),
      wrong: gqlNull("regionsById"),
    },
  ];
  for (const object of STANDARD) {
    const uid = alpha.objectByName[object] as string;
    const list = lowerFirst(object);
    probes.push(
      gql(`${object} by A's id`, `{ ${list}ById(UID: "${uid}") { UID } }`, gqlNull(`${list}ById`)),
      gql(
        `${object} filtered by A's id`,
        `{ ${list}(filter: "UID == '${uid}'") { totalCount edges { node { UID } } } }`,
        gqlEmpty(list),
      ),
      gql(`${object} listed`, `{ ${list}(first: 200) { edges { node { UID } } } }`, status(200)),
      gql(
        `update A's ${object}`,
        `mutation { schema { update${object}(input: {UID: "${uid}"}) } }`,
        gqlError("NOT_FOUND"),
      ),
      gql(`delete A's ${object}`, `mutation { schema { d: delete${object}(UID: "${uid}") } }`, (r) =>
        r.body?.data?.schema?.d === null || r.body?.errors ? null : "deleted something",
      ),
    );
  }
  // B's own namesakes: allowed, and separate from A's.
  probes.push(
    rest("POST", "/custom/standalone/schemas", status(200), {
      name: "AlphaThing",
      fields: [{ name: "Code", column: { type: "string", unique: true } }],
    }),
    gql(
      "B's namesake object upserted by A's key",
      `mutation { schema { upsertAlphaThing(input: {Code: "alpha-code"}, keyField: "Code") } }`,
      status(200),
    ),
    gql("B's namesake object listed", `{ alphaThing { edges { node { UID Code } } } }`, (r) =>
      r.body?.data?.alphaThing?.edges?.length === 1 && !r.text.includes(alpha.thingId)
        ? null
        : "not B's own one record",
    ),
    rest("POST", "/configuration/extension", status(200), { key: "ALPHA_PLAIN", value: "bravo-value" }),
    rest("POST", "/webhooks", status(201), {
      name: "alpha-hook",
      url: `${receiver.url}/bravo`,
      type: "graphql",
      query: "subscription { schemaRegions { operation data { UID Name } } }",
    }),
    gql(
      "B writes what A's webhook would match",
      `mutation { schema { insertRegions(input: {Name: "Bravo North", Timezone: "UTC"}) } }`,
      status(200),
    ),
  );
  return probes;
}
