#!/usr/bin/env node
import { runDemo } from './demo';

runDemo().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`conclave demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
