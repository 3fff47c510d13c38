#!/usr/bin/env node
import { runCli } from './cli';
import { noteStdoutClosed } from './cli-context';

/** How long a finished command may take to let go of its last handles before we exit anyway, ms. */
const EXIT_GRACE_MS = 3000;

// The reader of our stdout went away (`conclave campaign --json | head -1`): the command shuts
// down as on SIGTERM — step down and release — instead of dying on an unhandled EPIPE.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') noteStdoutClosed();
  else throw err;
});

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
