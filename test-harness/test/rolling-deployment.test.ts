import { expect, test } from '@jest/globals';
import { RollingDeployment, type CandidateSlot, type FaultCluster } from '@conclave/test-harness';

// The rolling deployment of the migration fault runs, on a stand-in cluster (no server, no
// process): the order of kinds, the turn at either end, and the rule before the first process of
// a kind two steps from the one going away.

const KINDS = ['old', 'dual', 'to-only'] as const;

interface FakeProc {
  id: string;
  key: string;
  hasExited: boolean;
  stop(): Promise<void>;
}

/** Slots whose processes are plain objects; `leaderKind` decides which slot leads. */
function fakeCluster(size: number): { cluster: FaultCluster; alive: () => string[]; setLeader: (kind: string | null) => void } {
  let counter = 0;
  let leaderKind: string | null = null;
  const live = new Set<FakeProc>();
  const proc = (slot: CandidateSlot): FakeProc => {
    const id = `c${slot.index}-${counter++}-${slot.nodeKind}`;
    const p: FakeProc = {
      id,
      key: `${id}@1`,
      hasExited: false,
      stop: async () => {
        p.hasExited = true;
        live.delete(p);
      },
    };
    live.add(p);
    return p;
  };
  const slots: CandidateSlot[] = [];
  const cluster = {
    slots,
    leadingNow: (slot: CandidateSlot) => leaderKind !== null && slot.nodeKind === leaderKind && slots.find((s) => s.nodeKind === leaderKind) === slot,
    leader: () => slots.find((s) => leaderKind !== null && s.nodeKind === leaderKind) ?? null,
    spawn: async (slot: CandidateSlot) => {
      const p = proc(slot);
      slot.proc = p as unknown as CandidateSlot['proc'];
      slot.restarting = false;
      return slot.proc;
    },
  } as unknown as FaultCluster;
  for (let i = 0; i < size; i++) {
    const slot = { index: i, nodeKind: 'old', frozen: false, restarting: false, generation: 0 } as unknown as CandidateSlot;
    slots.push(slot);
    slot.proc = proc(slot) as unknown as CandidateSlot['proc'];
  }
  return {
    cluster,
    alive: () => [...live].map((p) => p.id.replace(/^c\d+-\d+-/, '')),
    setLeader: (kind) => {
      leaderKind = kind;
    },
  };
}

test('goes old → dual → to-only → dual → old, one process a step, and never runs old beside to-only', async () => {
  const { cluster, alive, setLeader } = fakeCluster(3);
  const rollout = new RollingDeployment(cluster, KINDS, 50);
  const seen: string[] = [];
  setLeader('dual');
  for (let i = 0; i < 12; i++) {
    const r = await rollout.step(0.5);
    expect(r).not.toBeNull();
    seen.push(`${r!.from}→${r!.to}`);
    const kinds = new Set(alive());
    expect(kinds.has('old') && kinds.has('to-only')).toBe(false);
  }
  expect(seen).toEqual([...Array(3).fill('old→dual'), ...Array(3).fill('dual→to-only'), ...Array(3).fill('to-only→dual'), ...Array(3).fill('dual→old')]);
  expect(rollout.report()).toMatchObject({ steps: 12, cycles: 1, deferred: 0 });
  // The next cycle starts over.
  expect((await rollout.step(0))!.to).toBe('dual');
});

test('the first to-only (and the first old of a rollback) waits for a dual leader, and is put off without one', async () => {
  const { cluster, setLeader } = fakeCluster(2);
  const rollout = new RollingDeployment(cluster, KINDS, 30);
  setLeader('old');
  await rollout.step(0);
  await rollout.step(0);
  // Every slot is dual now, but an old-kind leader is what the stand-in reports: put off.
  expect(await rollout.step(0)).toBeNull();
  setLeader('dual');
  expect((await rollout.step(0))!.to).toBe('to-only');
  await rollout.step(0);
  setLeader('to-only');
  expect((await rollout.step(0))!.to).toBe('dual');
  expect((await rollout.step(0))!.to).toBe('dual');
  expect(await rollout.step(0)).toBeNull();
  setLeader('dual');
  expect((await rollout.step(0))!.to).toBe('old');
  expect(rollout.report().deferred).toBe(2);
});

test('leaves alone a slot being restarted by a fault', async () => {
  const { cluster } = fakeCluster(2);
  const rollout = new RollingDeployment(cluster, KINDS, 10);
  cluster.slots[0]!.restarting = true;
  const r = await rollout.step(0);
  expect(r!.stopped.startsWith('c1-')).toBe(true);
  expect(await rollout.step(0)).toBeNull();
});
