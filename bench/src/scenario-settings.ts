import { randomBytes } from 'node:crypto';

/** What every scenario runs with: the lease, how many candidates, where progress is logged. */
export interface BenchSettings {
  leaseMs: number;
  candidates: number;
  log: (line: string) => void;
}

const uniq = () => `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
export const electionName = (scenario: string) => `bench-${scenario}-${uniq()}`;

/**
 * Node's settings for a process of thousands of elections, as the README advises: a young
 * generation of 64 MiB semi-spaces instead of 16 (README, "Thousands of elections in one process").
 */
export const MANY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
