// @test-engines sqlite: its fixture (test/support/delivery-log.ts) writes webhooks and variables with bun:sqlite
/**
 * An attempt's request from a kept webhook definition: what depends only on the
 * definition is made once and shared; variables are read, and the previous
 * secret's grace judged, at every attempt. Real store file and secret box.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { DeliveryStore, DeliveryWebhook } from "../../common/delivery-log/delivery-store.ts";
import { openDeliveryStore } from "../../common/delivery-log/open-delivery-store.ts";
import { createSecretBox } from "../../common/secret-box.ts";
import { createRequestPreparer, type PrepareRequest } from "../../dispatcher/prepare-request.ts";
import { signPayload } from "../../dispatcher/sign-payload.ts";
import { type DeliveryLogFixture, openDeliveryLog, TEST_SECRETS_KEY } from "../support/delivery-log.ts";

describe("requests prepared from a kept webhook definition", () => {
  let fixture: DeliveryLogFixture;
  let store: DeliveryStore;
  let prepare: PrepareRequest;
  let clock = 0;
  beforeEach(async () => {
    fixture = openDeliveryLog();
    store = await openDeliveryStore({ engine: "sqlite", path: `${fixture.dataDir}/store.sqlite` });
    clock = 1_700_000_000_000;
    prepare = createRequestPreparer({ store, box: createSecretBox(TEST_SECRETS_KEY), now: () => clock });
  });
  afterEach(async () => {
    await store.close();
    fixture.close();
  });

  const definition = async (id: string) => {
    const { webhook } = await store.loadDelivery(fixture.tenantId, "none", id);
    return webhook as DeliveryWebhook;
  };

  test("a definition naming no variable is rendered once: its attempts share the URL, each with its own headers, body and signature", async () => {
    const secret = fixture.addWebhook({
      id: "w1",
      url: "https://hooks.example/in",
      headers: { "X-Team": "ops" },
    });
    const webhook = await definition("w1");
    const [a, b] = [fixture.addDelivery("w1"), fixture.addDelivery("w1")];
    const first = await prepare(a, webhook);
    clock += 2000;
    const second = await prepare(b, webhook);
    expect(second.url).toBe(first.url);
    expect(second.headers).not.toBe(first.headers);
    expect([first.headers["x-team"], second.headers["x-team"]]).toEqual(["ops", "ops"]);
    expect(second.headers["webhook-signature"]).toBe(
      signPayload(secret, b.deliveryId, (clock / 1000) | 0, JSON.stringify(b.body)),
    );
    expect(first.headers["webhook-id"]).toBe(a.deliveryId);
  });

  test("variables are read at every attempt: a value changed between two attempts of one definition is sent", async () => {
    fixture.setVariable("TEAM", "ops");
    fixture.addWebhook({ id: "w1", url: "https://hooks.example/in", headers: { "X-Team": "{{ TEAM }}" } });
    const webhook = await definition("w1");
    expect((await prepare(fixture.addDelivery("w1"), webhook)).headers["x-team"]).toBe("ops");
    fixture.setVariable("TEAM", "sales");
    expect((await prepare(fixture.addDelivery("w1"), webhook)).headers["x-team"]).toBe("sales");
  });
});
