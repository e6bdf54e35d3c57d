// Builds dist/ (committed, embedded in bc-server by src/api/console.rs): app.js from src/main.tsx
// with the TypeScript client of ../clients/typescript bundled in, app.css and index.html.
// esbuild's output depends only on its inputs, so clients/check can rebuild and compare.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

mkdirSync("dist", { recursive: true });
await build({
  entryPoints: { app: "src/main.tsx" },
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  // The client's packages are installed in its own folder; the console does not pin them twice.
  nodePaths: ["../clients/typescript/node_modules"],
  legalComments: "eof",
  outdir: "dist",
  logLevel: "warning",
});
await build({ entryPoints: { app: "src/style.css" }, bundle: true, minify: true, outdir: "dist", logLevel: "warning" });
copyFileSync("src/index.html", "dist/index.html");
