/** The console's browser entry (index.html loads it): Monaco's workers first, then the app. */
import "./monaco-workers.ts";
import { createRoot } from "react-dom/client";
import { App } from "./app.tsx";

const root = document.getElementById("root");
if (root) createRoot(root).render(<App />);
