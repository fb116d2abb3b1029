/** The baseline of the HTTP benchmarks: a bare Bun.serve answering a small JSON document. argv: <port>. */
const body = JSON.stringify({ data: { ok: true, items: [1, 2, 3] } });
Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.argv[2]),
  fetch: () => new Response(body, { headers: { "content-type": "application/json" } }),
});
console.log("ready");
