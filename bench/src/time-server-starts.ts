import { performance } from 'node:perf_hooks';
import { benchKits } from './bench-kits';

/**
 * How long each private server environment of the tests takes to start and to stop: every
 * backend's kit, every topology it stages (what a fault test or a conformance file pays before
 * its first test). Prints one Markdown row per environment, the fastest of `--rounds` starts
 * (default 3). Run it on a quiet machine:
 *
 *   npm run bench:server-starts [-- --rounds 3]
 */
async function main(): Promise<void> {
  const roundsFlag = process.argv.indexOf('--rounds');
  const rounds = roundsFlag >= 0 ? Number(process.argv[roundsFlag + 1]) : 3;
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive whole number');
  process.stdout.write('| backend | topology | servers | start, ms | stop, ms |\n|---|---|---|---|---|\n');
  for (const kit of await benchKits()) {
    for (const topology of kit.topologies) {
      if (topology === 'duplicate-id') continue; // the `single` servers, with another candidate layout
      let start = Infinity;
      let stop = Infinity;
      let servers = 0;
      for (let round = 0; round < rounds; round++) {
        const t0 = performance.now();
        const env = await kit.startFaultEnvironment(1500, topology);
        const t1 = performance.now();
        await env.close();
        start = Math.min(start, t1 - t0);
        stop = Math.min(stop, performance.now() - t1);
        servers = env.servers.length;
      }
      process.stdout.write(`| ${kit.kind} | ${topology} | ${servers} | ${Math.round(start)} | ${Math.round(stop)} |\n`);
    }
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
