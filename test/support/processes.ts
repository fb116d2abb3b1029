/** Helpers for tests that run the real processes: read their output, find their children, check they are gone. */
import { readFileSync } from "node:fs";

/** Collects a stream's text as it arrives, so a test can wait for a line. */
export function collect(stream: ReadableStream<Uint8Array>): { text: () => string; done: Promise<void> } {
  let text = "";
  const decoder = new TextDecoder();
  const done = (async () => {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  })();
  return { text: () => text, done };
}

/** Pids of the direct children of `pid` (Linux /proc). */
export function childPids(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    return children === "" ? [] : children.split(/\s+/).map(Number);
  } catch {
    return [];
  }
}

/** True while `pid` is a live (not zombie) process. */
export function isRunning(pid: number): boolean {
  try {
    const state = /State:\s+(\w)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return state !== undefined && state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}
