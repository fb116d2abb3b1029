/** The console's browser entry (index.html loads it): Monaco's workers and quirks first, then the app. */
import "./monaco-canceled.ts";
import "./monaco-workers.ts";
import { createRoot } from "react-dom/client";
import { App } from "./app.tsx";

const root = document.getElementById("root");
if (root) createRoot(root).render(<App />);
