/** Monaco's own worker (the editor's text model off the main thread), an entry of the console's build. */
import "monaco-editor/esm/vs/editor/editor.worker.js";
