/**
 * The browser console in a real browser against the real processes (API, dispatcher, Redis) and a
 * recording receiver: sign in with a token, run a query in GraphiQL and read the answer, insert a
 * record with a mutation and watch its webhook delivery appear in the console, retry it, read the
 * custom objects, sign out. Screenshots go to .test-data/screenshots/console/ (gitignored).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { chromiumMissing, launchChromium, screenshotDir } from "../support/browser.ts";
import { eventually } from "../support/eventually.ts";
import { apiClient } from "../support/flow/api-client.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type RunningService, startService } from "../support/service-processes.ts";

const missing = chromiumMissing();
if (missing) console.log(`console browser test skipped: ${missing}`);

const RECEIVER_ANSWER = "thanks, got it";
let service: RunningService;
let receiver: Receiver;
let browser: Browser;

beforeAll(async () => {
  if (missing) return;
  receiver = startReceiver(() => new Response(RECEIVER_ANSWER));
  [service, browser] = await Promise.all([startService(), launchChromium()]);
}, 30_000);
afterAll(async () => {
  if (missing) return;
  await browser?.close();
  await service?.stop();
  await receiver?.stop();
});

/** What Monaco shows in the editor matching `selector`, its no-break spaces made plain. */
const editorText = async (page: Page, selector: string) =>
  ((await page.locator(`${selector} .view-lines`).textContent()) ?? "").replace(/\u00a0/g, " ");

/** Replaces the operation in GraphiQL's editor, runs it, and waits for an answer that holds `expected`. */
async function runOperation(page: Page, operation: string, expected: string): Promise<string> {
  await page.locator(".graphiql-query-editor .monaco-editor").click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(operation);
  await page.locator(".graphiql-execute-button").click();
  return eventually(
    async () => {
      const answer = await editorText(page, ".result-window");
      expect(answer).toContain(expected);
      return answer;
    },
    { timeoutMs: 10_000 },
  );
}

test.skipIf(missing !== null)(
  "a signed-in console runs GraphQL, shows a record's webhook delivery, retries it, lists custom objects",
  async () => {
    const shots = screenshotDir("console");
    const client = apiClient(service.base, service.token);
    const hook = await client.request("POST", "/webhooks", {
      body: {
        name: "regions-to-receiver",
        url: `${receiver.url}/hooks/regions`,
        type: "graphql",
        query: "subscription { schemaRegions { operation data { Name } } }",
      },
    });
    expect(hook.status).toBe(201);
    const vehicles = await client.request("POST", "/custom/standalone/schemas", {
      body: {
        name: "Vehicles",
        label: "Vehicles",
        description: "The fleet",
        fields: [
          { name: "Plate", column: { type: "string", unique: true, maxLength: 16 } },
          { name: "Seats", column: { type: "int", required: true, defaultValue: 4 } },
        ],
      },
    });
    expect(vehicles.status).toBe(200);

    const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console error: ${message.text()}`);
    });
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
    });
    // Every call the page makes to the API, with the Authorization it carried.
    const apiCalls: { path: string; authorization: string | undefined }[] = [];
    page.on("request", (request) => {
      const { pathname } = new URL(request.url());
      if (!pathname.startsWith("/console"))
        apiCalls.push({ path: pathname, authorization: request.headers().authorization });
    });

    const started = performance.now();
    await page.goto(`${service.base}/console`);
    await page.getByLabel("Token").fill(service.token);
    await page.screenshot({ path: join(shots, "1-sign-in.png") });
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator(".graphiql-query-editor .monaco-editor").waitFor({ timeout: 15_000 });
    const loadedMs = performance.now() - started;

    expect(await page.evaluate(() => sessionStorage.getItem("console.token"))).toBe(service.token);
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }))).not.toContain(service.token);

    // GraphiQL introspected the tenant's schema: its docs list the tenant's query root and objects.
    await page.getByRole("button", { name: "Show Documentation Explorer" }).click();
    const docs = page.locator(".graphiql-doc-explorer");
    await docs.getByText("Root Types").waitFor({ timeout: 10_000 });
    await docs.getByRole("link", { name: "Query", exact: true }).click();
    await docs.getByText("regionsById").waitFor();
    await page.screenshot({ path: join(shots, "2-graphiql-docs.png") });
    await page.getByRole("button", { name: "Hide Documentation Explorer" }).click();

    const answer = await runOperation(page, "{ regions(first: 5) { totalCount } }", '"totalCount": 0');
    expect(answer).toContain('"regions"');
    await page.screenshot({ path: join(shots, "3-graphiql-query.png") });

    await runOperation(
      page,
      'mutation { schema { insertRegions(input: {Name: "Console North", Timezone: "UTC"}) } }',
      '"insertRegions"',
    );

    await page.getByRole("button", { name: "Webhooks" }).click();
    await page.getByRole("button", { name: /regions-to-receiver/ }).waitFor();
    const row = page.locator(".deliveries-table tbody tr");
    await eventually(
      async () => {
        expect(await row.count()).toBe(1);
        expect(await row.locator(".badge").textContent()).toBe("succeeded");
      },
      { timeoutMs: 15_000 },
    );
    expect(await row.locator("td.answer summary").textContent()).toContain(`200 ${RECEIVER_ANSWER}`);
    expect(receiver.requests).toHaveLength(1);
    await row.locator("td.answer summary").click();
    await page.screenshot({ path: join(shots, "4-webhook-deliveries.png") });

    await row.getByRole("button", { name: "Retry" }).click();
    await page.getByText(/is queued again/).waitFor();
    await eventually(() => expect(receiver.requests).toHaveLength(2), { timeoutMs: 10_000 });
    await eventually(
      async () => {
        expect(await row.locator(".badge").textContent()).toBe("succeeded");
        expect(await row.locator("td.num").textContent()).toBe("2");
      },
      { timeoutMs: 10_000 },
    );
    await page.screenshot({ path: join(shots, "5-delivery-retried.png") });

    await page.getByRole("button", { name: "Custom objects" }).click();
    const card = page.getByRole("region", { name: "Vehicles" });
    await card.waitFor();
    expect(await card.textContent()).toContain("Plate");
    expect(await card.locator("tr", { hasText: "Seats" }).textContent()).toContain("required");
    await page.screenshot({ path: join(shots, "6-custom-objects.png") });

    // GraphiQL kept its tabs in this tab's sessionStorage, beside the token; nothing in localStorage.
    const kept = () =>
      page.evaluate(() => ({ session: Object.keys(sessionStorage), local: Object.keys(localStorage) }));
    expect((await kept()).session).toContain("graphiql:tabState");
    expect((await kept()).local).toEqual([]);
    // Signing out right after an edit, which GraphiQL saves after a 500 ms pause: the late write must
    // not bring anything back.
    await page.getByRole("button", { name: "GraphQL" }).click();
    await page.locator(".graphiql-query-editor .monaco-editor").click();
    await page.keyboard.insertText(" # an edit saved late");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Token").waitFor();
    await page.waitForTimeout(1000);
    expect(await kept()).toEqual({ session: [], local: [] });

    // The page's own calls all carried the token; none went anywhere but this origin.
    expect(apiCalls.length).toBeGreaterThan(0);
    expect(apiCalls.filter((call) => call.authorization !== `Bearer ${service.token}`)).toEqual([]);
    expect(problems).toEqual([]);
    console.log(`console screenshots: ${shots} (signed in to a ready editor in ${Math.round(loadedMs)} ms)`);
  },
  45_000,
);
