import { ConclaveError } from '@conclave/core';

/**
 * A request that got no answer by its deadline. Its message names the internal step (kept as
 * the cause); the backend reports the operation the caller asked for (see `toError`).
 */
export class RequestTimeoutError extends ConclaveError {
  constructor(readonly step: string) {
    super('BACKEND_UNAVAILABLE', `${step}: ZooKeeper did not answer in time`, { backend: 'zookeeper' });
  }
}
