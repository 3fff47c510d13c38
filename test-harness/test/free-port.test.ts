import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { PORT_BLOCK_SIZE, freePort, portBlockStart } from '../src/servers/free-port';

describe('freePort', () => {
  it('gives each Jest worker its own block of ports below the ephemeral range', () => {
    const ephemeralStart = 32_768;
    const starts = [0, 1, 2, 3, 4, 5, 6, 7, 8].map((w) => portBlockStart(w, ephemeralStart)!);
    for (const start of starts) {
      expect(start).toBeGreaterThanOrEqual(1024);
      expect(start + PORT_BLOCK_SIZE).toBeLessThanOrEqual(ephemeralStart);
    }
    const sorted = [...starts].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThanOrEqual(PORT_BLOCK_SIZE);
    expect(portBlockStart(1, 10_100)).toBeNull();
  });

  it('hands out distinct ports of its own block, skipping one something listens on', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const start = portBlockStart(Number(process.env.JEST_WORKER_ID ?? 0), low)!;
    const first = await freePort();
    expect(first).toBeGreaterThanOrEqual(start);
    expect(first).toBeLessThan(start + PORT_BLOCK_SIZE);
    // Occupy the port the walk reaches next: it must be skipped.
    const next = first + 1 < start + PORT_BLOCK_SIZE ? first + 1 : start;
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(next, '127.0.0.1', resolve));
    try {
      const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
      expect(ports).not.toContain(next);
      expect(new Set([first, ...ports]).size).toBe(21);
      for (const p of ports) {
        expect(p).toBeGreaterThanOrEqual(start);
        expect(p).toBeLessThan(start + PORT_BLOCK_SIZE);
      }
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});
