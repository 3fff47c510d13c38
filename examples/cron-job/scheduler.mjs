// A job scheduled on every host (croner fires it on each), run by one host per tick: at each
// tick every host campaigns once (runOnce); the one elected runs the job and keeps the lease a
// little past the tick, so a host that fires late finds the tick taken instead of running it again.
import { Cron } from 'croner';
import { Elector, runOnce } from '@conclave/core';
import { RedisBackend } from '@conclave/redis';

const url = process.env.CONCLAVE_REDIS_URL ?? 'redis://127.0.0.1:6379';
const election = process.env.ELECTION ?? 'example-report';
const pattern = process.env.SCHEDULE ?? '*/5 * * * * *'; // every 5 s (croner takes a seconds field)
const holdMs = Number(process.env.HOLD_MS ?? 2_000);
const host = process.env.HOST_NAME ?? `${process.pid}`;

const backend = new RedisBackend({ url });

async function report(tick, token) {
  // Pass `token` to what the job writes to, so a stale run's writes can be refused.
  console.log(`ran tick ${tick} on ${host} with token ${token}`);
}

const job = new Cron(pattern, { protect: true }, async () => {
  // The tick's second names it in the output: croner fires a few ms after it on every host.
  const tick = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
  const elector = new Elector({ backend, election, leaseMs: 3_000, logger: null });
  // Hold longer than the spread of the hosts' start times, shorter than the schedule's interval.
  const outcome = await runOnce(elector, ({ token }) => report(tick, token), { holdAtLeastMs: holdMs });
  if (!outcome.ran) console.log(`skipped tick ${tick} on ${host}: another host runs it`);
});

const shutdown = async () => {
  job.stop();
  await backend.close();
  process.exit(0);
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
console.log(`scheduled "${pattern}" on ${host}`);
