/**
 * The backends the bench measures: one kit module per backend (`@conclave/<pkg>/testing`, whose
 * kit starts the backend's private server and reads its counters), in the order of the results.
 * Adding a backend to the bench is one line here.
 */
export const BENCH_KIT_MODULES: readonly string[] = [
  '@conclave/mysql/testing',
  '@conclave/postgres/testing',
  '@conclave/redis/testing',
  '@conclave/zookeeper/testing',
  '@conclave/etcd/testing',
];
