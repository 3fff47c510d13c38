/**
 * `npm run soak -- --backend <kind or kit module> [--topology T] --seconds N [--seed S] [--lease-ms L] [--candidates C]`
 *
 * Loads the backend's kit (`--backend redis` is `@conclave/redis/testing`; a name with `/` or `@`
 * is a module: see `loadBackendKit`), starts its private servers in topology T (default
 * `single`; the others where the kit stages them: see `FaultTopology`, `BackendKit.topologies`),
 * C candidate processes (default the kit's, else 3) each behind its own fault proxy to each
 * server, and a guarded resource on the shared Redis or MariaDB (the kit's `guard`); injects
 * seeded random faults for N seconds (see `FAULT_KINDS`, and the kit's `faultWeights`), then
 * checks the whole history. Where the environment has node kinds (`migrate`), a rolling
 * deployment goes over and over them, one process per episode. Prints progress lines, one
 * summary line and the line that replays the run:
 *
 *   soak mysql: 600 s, seed 123, …, faults: 312 (…), overlaps: 0, …, stale writes: 0, … OK
 *
 * Exit code 0 when clean, 1 when the checker found a problem (the history is then written to a
 * JSON file), 2 for a usage error. SIGINT/SIGTERM end the
 * run early: it still heals, stops and checks, and cleans up its servers and processes.
 */
import { randomSeed } from '../faults/prng';
import type { BackendKit } from '../kits/backend-kit';
import { loadBackendKit } from '../kits/load-backend-kit';
import { FAULT_TOPOLOGIES, type FaultTopology } from './fault-environment';
import { runFaultSoak } from './fault-run';
import { summarizeRun } from './fault-summary';

interface SoakArgs {
  /** As given (the replay line repeats it). */
  backend: string;
  kit: BackendKit;
  topology: FaultTopology;
  seconds: number;
  seed: number;
  leaseMs: number;
  candidates: number;
}

const USAGE =
  `usage: npm run soak -- --backend <kind or kit module> [--topology <${FAULT_TOPOLOGIES.join('|')}>] --seconds N [--seed S] [--lease-ms L] [--candidates C]\n` +
  '  --backend <kind>: the kit @conclave/<kind>/testing (a backend package of this repository); a name with / or @ is a module';

async function parseArgs(argv: string[]): Promise<SoakArgs> {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`--${m[1]} needs a value`);
    values.set(m[1]!, value);
  }
  for (const key of values.keys()) {
    if (!['backend', 'topology', 'seconds', 'seed', 'lease-ms', 'candidates'].includes(key)) throw new Error(`unknown option --${key}`);
  }
  const backend = values.get('backend');
  if (!backend) throw new Error('--backend is required');
  const topology = values.get('topology') ?? 'single';
  if (!(FAULT_TOPOLOGIES as readonly string[]).includes(topology)) throw new Error(`--topology must be one of ${FAULT_TOPOLOGIES.join(', ')}`);
  const kit = await loadBackendKit(backend);
  if (!kit.topologies.includes(topology as FaultTopology)) {
    throw new Error(`--topology ${topology}: backend ${kit.kind} stages ${kit.topologies.join(', ')}`);
  }
  const int = (key: string, fallback: number, min: number) => {
    const raw = values.get(key);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${key} must be an integer ≥ ${min}, got ${JSON.stringify(raw)}`);
    return n;
  };
  return {
    backend,
    kit,
    topology: topology as FaultTopology,
    seconds: int('seconds', 60, 1),
    seed: int('seed', randomSeed(), 0),
    leaseMs: int('lease-ms', 1500, 500),
    candidates: int('candidates', kit.defaultCandidates ?? 3, 2),
  };
}

async function main(): Promise<number> {
  let args: SoakArgs;
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  try {
    args = await parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`soak: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return 2;
  }
  const abort = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      console.error(`soak: ${signal}, healing and stopping (again to exit at once)`);
      abort.abort();
    } else {
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const t = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
  t(`soak ${args.kit.kind} ${args.topology}: ${args.seconds} s, seed ${args.seed}, lease ${args.leaseMs} ms, ${args.candidates} candidates; starting servers`);
  const result = await runFaultSoak({
    backend: args.kit,
    topology: args.topology,
    durationMs: args.seconds * 1000,
    seed: args.seed,
    leaseMs: args.leaseMs,
    candidates: args.candidates,
    log: t,
    signal: abort.signal,
  });
  console.log(`soak ${summarizeRun(result)}`);
  console.log(`replay: npm run soak -- --backend ${args.backend} --topology ${args.topology} --seconds ${args.seconds} --seed ${args.seed} --lease-ms ${args.leaseMs} --candidates ${args.candidates}`);
  return result.ok ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
    // Leftover handles (a driver's reconnect timer) must not keep a finished soak alive.
    setTimeout(() => process.exit(code), 2000).unref();
  },
  (err: unknown) => {
    console.error(`soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
    setTimeout(() => process.exit(1), 2000).unref();
  },
);
