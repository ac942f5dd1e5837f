#!/usr/bin/env node
import * as nodeModule from 'node:module';
import { nodeVersionProblem } from './cli/node-version.js';

// Only modules that load on any Node are imported statically: an older Node gets the message
// below, not a crash somewhere in the gateway's imports.
const tooOld = nodeVersionProblem();
if (tooOld) {
  process.stderr.write(tooOld);
  process.exit(1);
}

// Node keeps the compiled code of every module it loads after this call on disk (in the OS temp
// directory) and reuses it on the next start: the gateway's imports took ~280 ms without it and
// ~220 ms with it on the 2-core bench machine, its vault worker ~100 ms and ~80 ms. A failure to
// use the directory only costs that time.
nodeModule.enableCompileCache?.();

const { runCli } = await import('./cli/main.js');
const code = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, environment: process.env });
// A failed start may leave a worker thread or a socket behind: a failure ends the process. A
// successful start keeps it serving until SIGTERM/SIGINT.
if (code !== 0) process.exit(code);
