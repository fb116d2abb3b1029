/**
 * The benchmark's receivers, in one process: argv is a list of answer delays
 * in ms (`0 0 10000`: two fast receivers and one answering after 10 s), each
 * on its own loopback port. Each reads the body and answers 200. Prints the
 * ports as a JSON line once listening. `GET /counts` on any of them answers
 * the POSTs each has answered so far, in argv order.
 */
const delays = process.argv.slice(2).map(Number);
const counts = delays.map(() => 0);

const servers = delays.map((delayMs, index) =>
  Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      if (request.method === "GET") return Response.json(counts);
      await request.arrayBuffer();
      if (delayMs > 0) await Bun.sleep(delayMs);
      counts[index] = (counts[index] ?? 0) + 1;
      return new Response("ok");
    },
  }),
);
console.log(JSON.stringify(servers.map((server) => server.port)));
