import { randomBytes } from 'node:crypto';

/** What every scenario runs with: the lease, how many candidates, where progress is logged. */
export interface BenchSettings {
  leaseMs: number;
  candidates: number;
  log: (line: string) => void;
}

const uniq = () => `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
export const electionName = (scenario: string) => `bench-${scenario}-${uniq()}`;
