import { expect, test } from '@jest/globals';
import { Etcd3 } from 'etcd3';
import { OwnKeyChecks, ownKey } from '../src/etcd-own-keys';
import { EtcdStore } from '../src/etcd-store';
import { closedAfterAll, metricSum, privateEtcd, raftLeaderOf } from './etcd-test-env';

// A leader renews by checking that its key is still there (a transaction of compares). etcd
// answers a transaction with no read in it from the member's own copy, without asking the Raft
// leader, as it does a serializable read: a member cut off from the others that has not noticed
// yet (it still counts on its leader until its election timeout) answers from a stale copy. A
// leader whose key was deleted meanwhile (forceLeader, clearLeader, a duplicate of its id) would
// be told its key is still there, and renew past the fence that lets the next term start.
//
// A long election timeout here keeps the cut-off member counting on its leader for seconds.

const ELECTION_TIMEOUT_MS = 5_000;
const etcd = privateEtcd({ members: 3, peerLinks: true, heartbeatMs: 100, electionTimeoutMs: ELECTION_TIMEOUT_MS, startTimeoutMs: 60_000 });
const opened = closedAfterAll();

test("a renewal's check of its key is never answered from the stale copy of a member cut off from its peers", async () => {
  const cluster = etcd.cluster;
  const raftLeader = await raftLeaderOf(cluster);
  const cutOff = cluster.members.findIndex((_, i) => i !== raftLeader);
  const clientOf = (i: number) => {
    const client = new Etcd3({ hosts: `127.0.0.1:${cluster.members[i]!.port}` });
    opened.push(client);
    return client;
  };
  const quorum = clientOf(raftLeader);
  const viaCutOff = clientOf(cutOff);
  const checks = new OwnKeyChecks(new EtcdStore(viaCutOff.kv, viaCutOff.leaseClient, 2_000), 128);
  const key = `stale/${process.pid}/leader`;
  await quorum.put(key).value('l');
  const created = Number((await quorum.get(key).exec()).kvs[0]!.create_revision);
  // The cut-off member has the key (its copy is what a stale answer would show).
  expect(await checks.check(ownKey(key, created))).toBe(true);

  cluster.isolate(cutOff, 'silent');
  try {
    await quorum.delete().key(key);
    const checked = await checks.check(ownKey(key, created)).then(
      (held) => (held ? 'still there' : 'gone'),
      () => 'no answer',
    );
    // Only meaningful while the member still counted on its leader (else it refuses every call).
    const stillHadLeader = (await metricSum(cluster.members[cutOff]!.port, 'etcd_server_has_leader')) === 1;
    expect({ stillHadLeader, checked: checked === 'still there' ? checked : 'gone or no answer' }).toEqual({
      stillHadLeader: true,
      checked: 'gone or no answer',
    });
  } finally {
    cluster.heal();
  }
}, 120_000);
