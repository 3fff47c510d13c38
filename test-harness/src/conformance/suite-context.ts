import { randomBytes } from 'node:crypto';
import { Elector, type ElectionBackend, type ElectorOptions } from '@conclave/core';
import { ControlledBackend } from '../controlled-backend';
import { HistoryRecorder } from '../history/history-recorder';
import type { BackendFactory, ConformanceOptions } from './conformance-options';

/**
 * What one conformance test works with: backends (one per candidate, like separate processes),
 * Electors, a history recorder, and cleanup of all of them after the test.
 */
export class SuiteContext {
  readonly leaseMs: number;
  readonly history = new HistoryRecorder();
  private readonly backends: ControlledBackend[] = [];
  private readonly electors: Elector[] = [];
  private counter = 0;

  constructor(
    private readonly factory: BackendFactory,
    private readonly options: Required<ConformanceOptions>,
  ) {
    this.leaseMs = options.leaseMs;
  }

  /** A unique election name for this test. */
  election(label = 'e'): string {
    return `${this.options.electionPrefix}-${label}-${++this.counter}-${randomBytes(3).toString('hex')}`;
  }

  /** A fresh backend (own connection/session) whose client side the test controls (see ControlledBackend). */
  async backend(): Promise<ControlledBackend> {
    const backend = new ControlledBackend(await this.factory.create());
    this.backends.push(backend);
    return backend;
  }

  /** An Elector on its own fresh backend (or on `backend`), recorded in the history. */
  async elector(
    election: string,
    candidateId: string,
    extra: Partial<ElectorOptions> & { backend?: ElectionBackend } = {},
  ): Promise<Elector> {
    const backend = extra.backend ?? (await this.backend());
    const elector = new Elector({
      leaseMs: this.leaseMs,
      retryMs: Math.floor(this.leaseMs / 5),
      ...extra,
      backend,
      election,
      candidateId,
    });
    this.electors.push(elector);
    this.history.attach(elector);
    return elector;
  }

  /**
   * Makes `backend` look like a frozen process to the server: calls hang (or are refused at once),
   * the lease lapses.
   */
  async freeze(backend: ControlledBackend, calls: 'hang' | 'refuse' = 'hang'): Promise<void> {
    if (calls === 'hang') backend.hang();
    else backend.failCalls();
    await this.factory.freeze?.(backend.inner);
  }

  async cleanup(): Promise<void> {
    this.history.detach();
    for (const backend of this.backends) {
      backend.failCalls(false);
      backend.unhang();
    }
    await Promise.all(this.electors.splice(0).map((e) => e.stop()));
    await Promise.all(this.backends.splice(0).map((b) => b.close().catch(() => undefined)));
  }
}

export function resolveConformanceOptions(options: ConformanceOptions = {}): Required<ConformanceOptions> {
  return {
    leaseMs: options.leaseMs ?? 1500,
    manyElections: options.manyElections ?? 200,
    electionPrefix: options.electionPrefix ?? `conformance-${randomBytes(3).toString('hex')}`,
  };
}
