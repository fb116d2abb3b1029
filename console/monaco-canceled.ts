/**
 * Monaco 0.52 rejects a promise with its own `Canceled` error when an editor is disposed while a
 * delayed task is pending (microsoft/monaco-editor#4702): GraphiQL disposes its editors when the
 * console signs out. Nothing is wrong then, so that one rejection (name and message both
 * "Canceled", exactly Monaco's CancellationError) is not reported as uncaught; every other is.
 */

const isMonacoCanceled = (reason: unknown) =>
  reason instanceof Error && reason.name === "Canceled" && reason.message === "Canceled";

window.addEventListener("unhandledrejection", (event) => {
  if (isMonacoCanceled(event.reason)) event.preventDefault();
});
