import { consoleLogger, redactUrl } from '../src';
import { redactText } from '../src/spi';

/** What `redactUrl` shows: the URL's shape for a reader, never a password. */

describe('redactUrl', () => {
  test.each([
    ['mysql://root:hunter2@db:3306/app', 'mysql://root:***@db:3306/app'],
    ['mysql://root:p@ss@db/app', 'mysql://root:***@db/app'],
    ['redis://:hunter2@', 'redis://:***@'],
    ['redis://hunter2@h:6379', 'redis://***@h:6379'],
    ['redis://:hun%ZZter@h', 'redis://:***@h'],
    ['zookeeper://admin:hunter2@h1:2181,h2:2181/app?root=/x', 'zookeeper://admin:***@h1:2181,h2:2181/app?root=/x'],
    ['admin:hunter2@h:2181/app', 'admin:***@h:2181/app'],
    ['redis://h:6379/0?password=hunter2&tokenClockFloor=false', 'redis://h:6379/0?password=***&***'],
    ['mysql://u:p@h/db?table=t&sslKey=/k.pem', 'mysql://u:***@h/db?table=t&sslKey=***'],
    ['redis://:pa?ss@h', 'redis://***'],
    ['memory:', 'memory:'],
    ['redis://127.0.0.1:6379/3', 'redis://127.0.0.1:6379/3'],
  ])('%s → %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  test('a migration URL keeps its shape; the password inside each percent-encoded URL is hidden', () => {
    const from = encodeURIComponent('mysql://root:hunter2@h/db');
    const to = encodeURIComponent('redis://:hunter3@h:6379');
    expect(redactUrl(`migrate:dual?from=${from}&to=${to}`)).toBe(
      `migrate:dual?from=${encodeURIComponent('mysql://root:***@h/db')}&to=${encodeURIComponent('redis://:***@h:6379')}`,
    );
  });

  test('a migration URL whose inner URL cannot be decoded or split shows none of it', () => {
    expect(redactUrl('migrate:dual?from=redis%3A%2F%2F%3Ahun%ZZter%40h&to=memory%3A')).toBe('migrate:dual?from=***&to=memory%3A');
    expect(redactUrl('migrate:dual?from=redis://:hun&ter@h&to=memory:')).toBe('migrate:dual?***');
  });

  test('an inner URL encoded twice is hidden as well as once', () => {
    const twice = encodeURIComponent(encodeURIComponent('mysql://root:hunter2@h/db'));
    expect(redactUrl(`migrate:dual?from=${twice}&to=memory%3A`)).not.toMatch(/hunter2/);
  });
});

describe('redactText', () => {
  test('hides the password of every URL in a message and leaves the rest alone', () => {
    expect(redactText('from "redis://:a1@h" to zookeeper://u:b2@h/x, done')).toBe('from "redis://:***@h" to zookeeper://u:***@h/x, done');
  });
});

describe('consoleLogger', () => {
  test('a URL in a logged error or field shows no password', () => {
    const lines: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      consoleLogger('debug').warn({ err: new Error('cannot reach redis://:logsecret@h:6379'), url: 'mysql://u:logsecret2@h/db' }, 'failed');
    } finally {
      spy.mockRestore();
    }
    expect(lines.join('')).toContain('redis://:***@h:6379');
    expect(lines.join('')).not.toMatch(/logsecret/);
  });
});
