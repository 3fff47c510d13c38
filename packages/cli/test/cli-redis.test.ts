import { describeCliElection } from './cli-election-group';
import { describeCliWatchPush } from './cli-watch-group';
import { REDIS_URL } from './cli-process';

describeCliElection('redis', () => REDIS_URL, { listsCandidates: true });
describeCliWatchPush('redis', () => REDIS_URL);
