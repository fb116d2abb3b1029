/**
 * The README stays true where a test can tell: every setting a process reads is in its
 * configuration table, and every link it makes to a file of the repository reaches one.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { WebhookToolConfigSchema } from "../../api/admin/webhook-tool.ts";
import { ApiConfigSchema } from "../../api/config.ts";
import { DispatcherConfigSchema } from "../../dispatcher/config.ts";

const root = join(import.meta.dir, "../..");
const readme = await Bun.file(join(root, "README.md")).text();
const configurationTable = readme.slice(
  readme.indexOf("## Configuration"),
  readme.indexOf("\n## ", readme.indexOf("## Configuration") + 1),
);

describe("README", () => {
  test("its configuration table names every setting of every process", () => {
    const settings = new Set([
      ...Object.keys(ApiConfigSchema.shape),
      ...Object.keys(DispatcherConfigSchema.shape),
      ...Object.keys(WebhookToolConfigSchema.shape),
    ]);
    const missing = [...settings].filter((name) => !configurationTable.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  test("every link to a file of the repository reaches one", () => {
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((match) => match[1] ?? "");
    const local = links.filter((link) => !/^[a-z]+:/.test(link));
    expect(local.length).toBeGreaterThan(0);
    expect(local.filter((link) => !existsSync(join(root, link)))).toEqual([]);
  });

  test("it points at no file outside the repository", () => {
    expect(readme).not.toContain("../shared");
  });
});
