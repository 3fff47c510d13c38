#!/usr/bin/env node
import { runCli } from './cli';

/** How long a finished command may take to let go of its last handles before we exit anyway, ms. */
const EXIT_GRACE_MS = 3000;

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Everything is closed by now, so the process ends on its own; this only guards against a
    // driver that keeps a handle open after close().
    setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
  },
  (err: unknown) => {
    process.stderr.write(`conclave: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
