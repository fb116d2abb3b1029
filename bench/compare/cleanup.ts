/**
 * Everything the comparison starts registers its stop here; the stops run in
 * reverse order when the run ends, when it fails, and on Ctrl-C or SIGTERM, so
 * nothing is left running.
 */

type Stop = () => Promise<void>;
const pending: { name: string; stop: Stop }[] = [];

/**
 * Registers `stop` and returns a function that runs it early (once) and unregisters it.
 * A failing stop is reported and does not keep the others from running.
 */
export function deferStop(name: string, stop: Stop): Stop {
  const entry = { name, stop };
  pending.push(entry);
  return async () => {
    const at = pending.indexOf(entry);
    if (at < 0) return;
    pending.splice(at, 1);
    await runStop(entry);
  };
}

async function runStop(entry: { name: string; stop: Stop }): Promise<void> {
  try {
    await entry.stop();
  } catch (error) {
    console.error(`compare: stopping ${entry.name} failed: ${(error as Error).message}`);
  }
}

/** Runs every registered stop, newest first. */
export async function stopAll(): Promise<void> {
  while (pending.length > 0) {
    const entry = pending.pop();
    if (entry) await runStop(entry);
  }
}

let signalled = false;

/** True once Ctrl-C or SIGTERM arrived: the errors of work cut short are expected then. */
export const isSignalled = () => signalled;

/** On Ctrl-C or SIGTERM: stop everything, then exit with 130. */
export function stopAllOnSignals(): void {
  const onSignal = (signal: string) => {
    if (signalled) return;
    signalled = true;
    console.error(`\ncompare: ${signal}, stopping everything it started`);
    void stopAll().finally(() => process.exit(130));
  };
  process.on("SIGINT", () => onSignal("SIGINT"));
  process.on("SIGTERM", () => onSignal("SIGTERM"));
}
