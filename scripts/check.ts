/**
 * The one gate (`bun run check`, run by `npm test` and CI): typecheck, lint and
 * format check, import-cycle check, dead-code and unused-dependency check (knip,
 * configured in knip.json), then the test suite. Stops at the first failing
 * step; ends with a plain "N passed, N failed" line for CI.
 */

export {};

const bin = (name: string) => `node_modules/.bin/${name}`;
const SOURCES = ["api", "dispatcher", "common", "console", "scripts", "test", "bench"];

const steps: { name: string; cmd: string[] }[] = [
  { name: "typecheck", cmd: [bin("tsc"), "-p", "."] },
  // The browser console has a project of its own (DOM types, JSX, no Bun types): console/tsconfig.json.
  { name: "typecheck the browser console", cmd: [bin("tsc"), "-p", "console"] },
  { name: "lint and format", cmd: [bin("biome"), "check", "--error-on-warnings", "."] },
  {
    name: "import cycles",
    cmd: [bin("madge"), "--circular", "--extensions", "ts,tsx", "--ts-config", "tsconfig.json", ...SOURCES],
  },
  // A hint (an ignore or entry in knip.json that is no longer needed) fails too, so the config stays true.
  {
    name: "unused files, exports and dependencies",
    cmd: [bin("knip"), "--no-progress", "--treat-config-hints-as-errors"],
  },
];

for (const step of steps) {
  console.log(`\n== ${step.name}`);
  const proc = Bun.spawn(step.cmd, { stdout: "inherit", stderr: "inherit" });
  if ((await proc.exited) !== 0) {
    console.error(`check: ${step.name} failed`);
    process.exit(1);
  }
}

console.log("\n== tests");
const tests = Bun.spawn([process.execPath, "test", ...process.argv.slice(2)], {
  stdout: "pipe",
  stderr: "pipe",
});
let output = "";
const relay = async (stream: ReadableStream<Uint8Array>, sink: NodeJS.WriteStream) => {
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    const text = decoder.decode(chunk, { stream: true });
    output += text;
    sink.write(text);
  }
};
await Promise.all([relay(tests.stdout, process.stdout), relay(tests.stderr, process.stderr)]);
const code = await tests.exited;
const passed = Number(/^\s*(\d+) pass$/m.exec(output)?.[1] ?? 0);
const failed = Number(/^\s*(\d+) fail$/m.exec(output)?.[1] ?? 0);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(code !== 0 || passed === 0 ? 1 : 0);
