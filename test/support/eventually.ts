/** Polls `check` until it stops throwing (or returns truthy), instead of sleeping a guessed time. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 5000, intervalMs = 20 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = new Error("condition never held");
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== false) return value;
      lastError = new Error("condition returned false");
    } catch (error) {
      lastError = error;
    }
    await Bun.sleep(intervalMs);
  }
  throw lastError;
}
