/**
 * Peer: the `etcd3` package's `Election`. Each candidate campaigns with its id as the value and
 * a lease TTL of the bench's lease (whole seconds, as etcd grants them); it leads from the
 * campaign's `elected` event until the campaign reports an error (its lease lost), and then
 * campaigns again. Stopping resigns.
 *
 * Measurement only: the campaign's lease is private in the library; the bench listens to its
 * keep-alive events to know when the server last extended it.
 */
import { Etcd3, type Campaign } from 'etcd3';
import { now, runPeer } from './peer-child';

runPeer((config, events) => {
  const url = new URL(config.backend);
  const client = new Etcd3({ hosts: `http://${url.host}` });
  const ttlSec = Math.max(1, Math.round(config.leaseMs / 1000));
  const election = client.election(config.election, ttlSec);
  let campaign: Campaign | null = null;
  let leading = false;
  let stopped = false;

  const run = () => {
    const sentAt = now();
    const c = election.campaign(config.candidateId);
    campaign = c;
    const lease = (c as unknown as { lease: NodeJS.EventEmitter }).lease;
    let firedAt = sentAt;
    lease.on('keepaliveFired', () => (firedAt = now()));
    lease.on('keepaliveSucceeded', (res: { TTL?: string | number }) => {
      if (leading && c === campaign) events.lease(firedAt + Number(res.TTL ?? ttlSec) * 1000);
    });
    c.on('elected', () => {
      if (c !== campaign || stopped) return;
      leading = true;
      events.elected();
      events.lease(sentAt + ttlSec * 1000);
    });
    c.on('error', (err: Error) => {
      if (c !== campaign) return;
      leading = false;
      events.revoked(`campaign error: ${err.message}`);
      events.warn(`campaign: ${err.message}`);
      if (!stopped) setTimeout(run, 200);
    });
  };

  return {
    async start() {
      // The first call proves the server answers; the campaign itself runs in the background.
      await client.get('bench-peer-ping').string();
      run();
    },
    isLeader: () => leading,
    async stop() {
      stopped = true;
      leading = false;
      await campaign?.resign().catch(() => undefined);
      client.close();
    },
  };
});
