import { performance } from 'node:perf_hooks';
import { Elector, MemoryBackend, MemoryStore } from '@conclave/core';

/** Options of `runDemo`. */
export interface DemoOptions {
  /** Lease of the demo's candidates, ms. Default 1000, so a crash take-over is quick to watch. */
  leaseMs?: number;
  /** Where the live view goes. Default process.stdout. */
  write?: (line: string) => void;
}

/** What `runDemo` measured. */
export interface DemoResult {
  /** From the leader's `stop()` to the next leader's election, ms. */
  gracefulHandoverMs: number;
  /** From the leader's crash to the next leader's election, ms (about a lease). */
  crashTakeoverMs: number;
  /** The candidates' lease, ms. */
  leaseMs: number;
}

/**
 * Three candidates on the in-memory backend: a live line per change of leader, a graceful
 * hand-over (the leader stops and releases), a crash (the leader's connection dies without a
 * release, so the others wait for its lease), and the take-over times measured on the way.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const leaseMs = options.leaseMs ?? 1000;
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const store = new MemoryStore(); // plays the server
  const backends = new Map<string, MemoryBackend>();
  const electors = ['alpha', 'bravo', 'charlie'].map((id) => {
    const backend = new MemoryBackend({ store });
    backends.set(id, backend);
    return new Elector({ backend, election: 'demo-report', candidateId: id, leaseMs });
  });
  const t0 = performance.now();
  const stamp = () => `${((performance.now() - t0) / 1000).toFixed(3).padStart(7)}s`;
  const view = () =>
    electors
      .map((e) => {
        const s = e.state;
        const role = s.role === 'leader' ? 'LEADER' : s.role;
        return `${e.candidateId}=${role}${s.role === 'leader' ? `#${s.token}` : ''}`;
      })
      .join('  ');
  for (const e of electors) {
    e.elected$.subscribe((ev) => write(`${stamp()}  ${e.candidateId} elected, token ${ev.token}   | ${view()}`));
    e.revoked$.subscribe((ev) => write(`${stamp()}  ${e.candidateId} revoked (${ev.reason})   | ${view()}`));
  }
  const leader = () => electors.find((e) => e.isLeader());
  const nextLeader = (exclude: Elector) =>
    new Promise<Elector>((resolve) => {
      const subs = electors
        .filter((e) => e !== exclude)
        .map((e) =>
          e.elected$.subscribe(() => {
            subs.forEach((s) => s.unsubscribe());
            resolve(e);
          }),
        );
    });

  write(`conclave demo: 3 candidates, in-memory backend, lease ${leaseMs} ms`);
  await Promise.all(electors.map((e) => e.start()));
  const first = leader()!;
  write(`${stamp()}  ${first.candidateId} leads with token ${first.token}; the others follow`);

  write(`${stamp()}  -- graceful hand-over: ${first.candidateId} stops and releases its lease`);
  const handoverStart = performance.now();
  const afterHandover = nextLeader(first);
  await first.stop();
  const second = await afterHandover;
  const gracefulHandoverMs = performance.now() - handoverStart;
  write(`${stamp()}  ${second.candidateId} took over in ${gracefulHandoverMs.toFixed(1)} ms`);
  await first.start();
  write(`${stamp()}  ${first.candidateId} rejoins as a follower   | ${view()}`);

  write(`${stamp()}  -- crash: ${second.candidateId}'s connection dies; nobody releases its lease`);
  const crashStart = performance.now();
  const afterCrash = nextLeader(second);
  await backends.get(second.candidateId)!.close();
  const third = await afterCrash;
  const crashTakeoverMs = performance.now() - crashStart;
  write(`${stamp()}  ${third.candidateId} took over in ${crashTakeoverMs.toFixed(1)} ms (lease ${leaseMs} ms)`);

  await Promise.all(electors.map((e) => e.stop()));
  await Promise.all([...backends.values()].map((b) => b.close()));
  write('');
  write(`graceful hand-over: ${gracefulHandoverMs.toFixed(1)} ms`);
  write(`crash take-over:    ${crashTakeoverMs.toFixed(1)} ms (bounded by the lease, ${leaseMs} ms)`);
  return { gracefulHandoverMs, crashTakeoverMs, leaseMs };
}
