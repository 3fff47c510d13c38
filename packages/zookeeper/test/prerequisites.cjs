'use strict';
/**
 * What this package's tests need on the machine, for scripts/prepare-test-env.cjs (its header
 * describes the fields): Java and ZooKeeper's jars, for the private servers the tests start.
 */
const { readdirSync, statSync } = require('node:fs');
const path = require('node:path');

const JAR = /^zookeeper.*\.jar$/;

/** A problem with ZOOKEEPER_CLASSPATH, or null. The launcher trusts the variable as given. */
function zookeeperClasspathProblem(env = process.env) {
  const cp = env.ZOOKEEPER_CLASSPATH;
  if (!cp) return null;
  const found = cp.split(path.delimiter).some((entry) => {
    if (path.basename(entry) === '*') entry = path.dirname(entry);
    try {
      if (statSync(entry).isDirectory()) return readdirSync(entry).some((f) => JAR.test(f));
      return JAR.test(path.basename(entry));
    } catch {
      return false;
    }
  });
  return found ? null : `ZOOKEEPER_CLASSPATH=${cp} holds no zookeeper*.jar: point it at ZooKeeper's jars, or unset it to use Debian's zookeeper package`;
}

module.exports = {
  requirements: [
    {
      name: 'a Java runtime',
      present: (p) => p.command('java'),
      apt: ['default-jre-headless'],
    },
    {
      // Where src/testing/zookeeper-jvm.ts looks (zookeeperClasspath()).
      name: "ZooKeeper's jars",
      present: (p) =>
        p.env.ZOOKEEPER_CLASSPATH
          ? true // checked on its own (configurationProblem): apt cannot fix a wrong variable
          : p.file('/usr/share/java/zookeeper.jar') || p.dirHas('/usr/share/zookeeper/lib', JAR) || p.dirHas('/opt/zookeeper/lib', JAR),
      apt: ['zookeeper'],
    },
  ],
  configurationProblem: zookeeperClasspathProblem,
  zookeeperClasspathProblem,
};
