/** Server-side counters, the server's own probes already subtracted. */
export interface ServerCounters {
  /** Operations the server executed (what `BenchServer.counterName` says they are), the reading's own probes left out. */
  ops: number;
  /** Requests read from the network (Redis total_reads_processed); null where the server has no such counter. */
  reads: number | null;
}

/**
 * A private server the bench measures, started by a kit (`BackendKit.startBenchServer`) on a
 * free loopback port, or a shared one where the kit falls back to it (`description` says which).
 */
export interface BenchServer {
  /** Port of the real server on 127.0.0.1. */
  readonly port: number;
  /** Backend URL for `createBackend`, on `port` (the server's, or a proxy's in front of it). */
  url(port?: number): string;
  /** Reads the counters, leaving out the statements or commands the reading itself costs. */
  counters(): Promise<ServerCounters>;
  /** The server's name and version as it reports them, for the results. */
  version(): Promise<string>;
  /** What the counters are, for the output. */
  readonly counterName: string;
  /** Where the server came from (private/shared), for the output. */
  readonly description: string;
  close(): Promise<void>;
}
