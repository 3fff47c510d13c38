import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The script is plain CommonJS (it runs before tsc), so it comes in untyped.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const env = require('../prepare-test-env.cjs');
// The script is checked here with what the tests of a few packages need (their
// test/prerequisites.cjs), in this order, whichever other packages the repository holds.
const needsOf = (packages: string[]) => packages.map((p) => require(`../../packages/${p}/test/prerequisites.cjs`));
const REQUIREMENTS = needsOf(['zookeeper', 'redis', 'mysql', 'etcd']).flatMap((n) => n.requirements);
const SERVICES = needsOf(['mysql', 'redis', 'postgres']).flatMap((n) => n.services);
const { zookeeperClasspathProblem } = require('../../packages/zookeeper/test/prerequisites.cjs');

describe('prepare-test-env', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'conclave-test-env-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function touch(file: string): void {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), '');
  }

  const probe = (extra: Record<string, string> = {}) => env.makeProbe({ PATH: '/usr/bin', ...extra }, root);

  it('finds nothing under an empty root and names every package once', () => {
    const missing = env.missingRequirements(probe(), REQUIREMENTS);
    expect(missing).toHaveLength(REQUIREMENTS.length);
    expect(env.aptPackages(missing)).toEqual(['default-jre-headless', 'zookeeper', 'redis-server', 'mariadb-server', 'mariadb-client', 'etcd-server']);
  });

  it('finds programs on PATH or in sbin, and ZooKeeper where the launcher looks', () => {
    for (const f of ['/usr/bin/java', '/usr/bin/redis-server', '/usr/sbin/mariadbd', '/usr/bin/mariadb-install-db', '/usr/bin/mariadb', '/usr/bin/etcd']) touch(f);
    expect(env.missingRequirements(probe(), REQUIREMENTS).map((r: { name: string }) => r.name)).toEqual(["ZooKeeper's jars"]);
    touch('/opt/zookeeper/lib/zookeeper-3.9.2.jar');
    expect(env.missingRequirements(probe(), REQUIREMENTS)).toEqual([]);
  });

  it('honours REDIS_SERVER and ETCD_BINARY and leaves ZOOKEEPER_CLASSPATH to its own check', () => {
    touch('/custom/redis-server-7');
    touch('/custom/etcd-3.5');
    const names = env
      .missingRequirements(probe({ REDIS_SERVER: '/custom/redis-server-7', ETCD_BINARY: '/custom/etcd-3.5', ZOOKEEPER_CLASSPATH: '/x' }), REQUIREMENTS)
      .map((r: { name: string }) => r.name);
    expect(names).not.toContain('redis-server');
    expect(names).not.toContain('etcd');
    expect(names).not.toContain("ZooKeeper's jars");
  });

  it('reports a ZOOKEEPER_CLASSPATH without a zookeeper jar', () => {
    expect(zookeeperClasspathProblem({ ZOOKEEPER_CLASSPATH: root })).toMatch(/holds no zookeeper\*\.jar/);
    touch('/zookeeper-3.8.0.jar');
    expect(zookeeperClasspathProblem({ ZOOKEEPER_CLASSPATH: `${root}/*` })).toBeNull();
    expect(zookeeperClasspathProblem({ ZOOKEEPER_CLASSPATH: `/nowhere.jar:${root}/zookeeper-3.8.0.jar` })).toBeNull();
    expect(zookeeperClasspathProblem({})).toBeNull();
  });

  it('says in one line what to install and how', () => {
    const line = env.cannotInstallMessage(REQUIREMENTS.slice(0, 2), 'not root');
    expect(line).toMatch(/^npm test: missing a Java runtime and ZooKeeper's jars \(not root\)\. /);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('sudo apt-get update && sudo apt-get install -y --no-install-recommends default-jre-headless zookeeper');
  });

  it('reads addresses from URLs, with default ports and quorum lists', () => {
    expect(env.urlAddresses('mysql://root@127.0.0.1:3306/test', 3306)).toEqual([{ host: '127.0.0.1', port: 3306 }]);
    expect(env.urlAddresses('mysql://u:p@db/app?table=t', 3306)).toEqual([{ host: 'db', port: 3306 }]);
    expect(env.urlAddresses('postgres://root@127.0.0.1/test', 5432)).toEqual([{ host: '127.0.0.1', port: 5432 }]);
    expect(env.urlAddresses('redis://a:7000,b,[::1]:7002/1', 6379)).toEqual([
      { host: 'a', port: 7000 },
      { host: 'b', port: 6379 },
      { host: '::1', port: 7002 },
    ]);
    expect(() => env.urlAddresses('127.0.0.1:6379', 6379)).toThrow(/not a URL/);
  });

  it('takes each service from its variable and names the variable when it is down', () => {
    const targets = env.serviceTargets({ CONCLAVE_REDIS_URL: 'redis://10.0.0.9:6380' }, SERVICES);
    expect(targets.map((t: { url: string; fromEnv: boolean }) => [t.url, t.fromEnv])).toEqual([
      ['mysql://root@127.0.0.1:3306/test', false],
      ['redis://10.0.0.9:6380', true],
      ['postgres://root@127.0.0.1:5432/test', false],
    ]);
    const down = env.serviceMessage(targets[0], targets[0].addresses[0], 'connection refused');
    expect(down).toBe(
      'npm test: MariaDB is not reachable at 127.0.0.1:3306: connection refused; start it (sudo apt-get install mariadb-server && sudo service mariadb start), or point CONCLAVE_MYSQL_URI at another server, e.g. CONCLAVE_MYSQL_URI=mysql://root@127.0.0.1:3306/test',
    );
    expect(env.serviceMessage(targets[1], targets[1].addresses[0], 'x')).toMatch(/at 10\.0\.0\.9:6380 \(from CONCLAVE_REDIS_URL\): x; start it, or fix CONCLAVE_REDIS_URL$/);
  });

  it('connects to a listening port and reports a closed one', async () => {
    const server = createServer((s) => s.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    expect(await env.tryConnect({ host: '127.0.0.1', port })).toBeNull();
    await new Promise((resolve) => server.close(resolve));
    expect(await env.tryConnect({ host: '127.0.0.1', port })).toBe('connection refused');
  });

  it('keeps trying a server that starts late for CONCLAVE_SERVICE_WAIT_SECONDS, and gives up at once without it', async () => {
    const probe = createServer((s) => s.destroy());
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    const urls = {
      CONCLAVE_MYSQL_URI: `mysql://root@127.0.0.1:${port}/test`,
      CONCLAVE_REDIS_URL: `redis://127.0.0.1:${port}`,
      CONCLAVE_POSTGRES_URI: `postgres://root@127.0.0.1:${port}/test`,
    };
    const logged: string[] = [];

    const once = await env.checkServices(urls, (line: string) => logged.push(line), SERVICES);
    expect(once).toHaveLength(3);
    expect(logged).toEqual([]);

    const late = createServer((s) => s.destroy());
    const startLate = setTimeout(() => late.listen(port, '127.0.0.1'), 1200);
    const started = Date.now();
    const waited = await env.checkServices({ ...urls, CONCLAVE_SERVICE_WAIT_SECONDS: '30' }, (line: string) => logged.push(line), SERVICES);
    clearTimeout(startLate);
    await new Promise((resolve) => late.close(resolve));
    expect(waited).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1200);
    expect(logged).toHaveLength(3);
    expect(logged[0]).toMatch(/^npm test: MariaDB at 127\.0\.0\.1:\d+: connection refused; trying again for up to 30 s/);
  });

  it('refuses a wait that is not a number of seconds', async () => {
    expect(() => env.serviceWaitSeconds({ CONCLAVE_SERVICE_WAIT_SECONDS: 'soon' })).toThrow(/CONCLAVE_SERVICE_WAIT_SECONDS/);
    expect(await env.checkServices({ CONCLAVE_SERVICE_WAIT_SECONDS: '-1' }, () => {}, SERVICES)).toEqual([
      expect.stringMatching(/^npm test: CONCLAVE_SERVICE_WAIT_SECONDS must be/),
    ]);
  });
});
