/**
 * A separate process for the event worker's crash test: takes webhook events off the queue of
 * REDIS_PREFIX on TEST_REDIS_URL with the API's own worker, says which it took (`taken <uid>`) and
 * never finishes handling it, so a SIGKILL leaves the job held by a dead process.
 */

import { createWebhookEventWorker } from "../../api/feed/webhook-events.ts";
import { createLogger } from "../../common/log.ts";
import { connectRedis } from "../../common/redis.ts";
import { redisKeys } from "../../common/redis-keys.ts";

const redis = connectRedis(process.env.TEST_REDIS_URL as string, () => undefined);
createWebhookEventWorker({
  redis,
  keys: redisKeys(process.env.REDIS_PREFIX as string),
  log: createLogger("silent"),
  handle: (event) => {
    console.log(`taken ${event.kind === "deferred" ? event.recordUid : event.kind}`);
    return new Promise(() => undefined);
  },
}).start();
