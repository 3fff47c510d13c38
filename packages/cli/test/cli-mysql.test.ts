import { describeCliElection } from './cli-election-group';
import { MYSQL_URL } from './cli-process';

describeCliElection('mysql', () => MYSQL_URL, { listsCandidates: false });
