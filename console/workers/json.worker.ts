/** Monaco's JSON language worker (the variables editor and the answer), an entry of the console's build. */
import "monaco-editor/esm/vs/language/json/json.worker.js";
