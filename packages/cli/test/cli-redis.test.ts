import { describeCliElection } from './cli-election-group';
import { REDIS_URL } from './cli-process';

describeCliElection('redis', () => REDIS_URL, { listsCandidates: true });
