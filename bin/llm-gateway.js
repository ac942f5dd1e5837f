#!/usr/bin/env node
// The package's command. Plain JavaScript that any Node can parse: it checks the version before
// importing the gateway, which needs Node 24.
const REQUIRED_NODE_MAJOR = 24;
const major = Number(process.versions.node.split('.')[0]);
if (major < REQUIRED_NODE_MAJOR) {
  process.stderr.write(
    `llm-gateway needs Node ${REQUIRED_NODE_MAJOR} or later; this is Node ${process.versions.node} (${process.execPath}).\n` +
      `Install Node ${REQUIRED_NODE_MAJOR}, or use the container image, whose base is Node ${REQUIRED_NODE_MAJOR}.\n`,
  );
  process.exit(1);
}
await import('../dist/core/main.js');
