/**
 * The peers' names and titles, apart from their launchers so that the report (which only reads
 * results) loads no server or client code.
 */
export type PeerKind = 'mysql-row' | 'zk-recipe' | 'redlock' | 'etcd3';
export const PEER_KINDS: readonly PeerKind[] = ['mysql-row', 'zk-recipe', 'redlock', 'etcd3'];

export const PEER_TITLES: Record<PeerKind, string> = {
  'mysql-row': 'MySQL lease row polled every 1 s (blog pattern, mysql2)',
  'zk-recipe': "ZooKeeper's leader-election recipe (node-zookeeper-client)",
  redlock: '@sesamecare-oss/redlock using() with automatic extension',
  etcd3: "etcd3's Election",
};

/**
 * The store each peer runs on: a backend's kit (by kind, see `bench-kits.ts`), whose bench server the peer
 * gets, as conclave's backend on that store does.
 */
export const PEER_KITS: Record<PeerKind, string> = {
  'mysql-row': 'mysql',
  'zk-recipe': 'zookeeper',
  redlock: 'redis',
  etcd3: 'etcd',
};

export const isPeer = (kind: string): kind is PeerKind => (PEER_KINDS as readonly string[]).includes(kind);
