// Builds dist/ (committed, embedded in bc-server by src/api/console.rs): app.js from src/main.tsx
// with the TypeScript client of ../clients/typescript bundled in, app.css and index.html, and
// each of the two compressed once here (`.gz`, `.br`) so the server sends them as they are.
// esbuild's output, gzip's (no name, no time in its header) and brotli's depend only on their
// inputs, so clients/check can rebuild and compare.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

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
for (const file of ["dist/app.js", "dist/app.css"]) {
  const body = readFileSync(file);
  writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
  const quality = { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length };
  writeFileSync(`${file}.br`, brotliCompressSync(body, { params: quality }));
}
