import { Writable } from 'node:stream';
import bunyan from 'bunyan';
import pino from 'pino';
import winston from 'winston';
import { ConclaveError, Elector, MemoryBackend, fromBunyan, fromWinston, type Logger } from '@conclave/core';
import { waitFor } from '@conclave/test-harness';

/** A stream that keeps every line written to it. */
function memoryStream() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

/** A backend that refuses every call, with a message that quotes a password. */
class RefusingBackend extends MemoryBackend {
  override async campaign(): Promise<never> {
    throw new ConclaveError('BACKEND_UNAVAILABLE', 'connection refused by redis://:hunter2@db.internal:6379', { backend: 'memory' });
  }
}

/** Starts an Elector that fails its first campaign, and returns the JSON entry logged for it. */
async function failedCampaignEntry(logger: Logger, lines: string[]): Promise<Record<string, any>> {
  const e = new Elector({ backend: new RefusingBackend(), election: 'logged', leaseMs: 5000, logger });
  try {
    await e.start();
    const line = await waitFor(() => lines.find((l) => l.includes('campaign failed')), 'the campaign failure line');
    return JSON.parse(line);
  } finally {
    await e.stop();
  }
}

describe('loggers of pino, bunyan and winston keep the message and the error', () => {
  test('pino fits as it is', async () => {
    const { stream, lines } = memoryStream();
    const entry = await failedCampaignEntry(pino(stream), lines);
    expect(entry.msg).toBe('campaign failed');
    expect(entry.err.message).toContain('connection refused by');
    expect(entry.election).toBe('logged');
  });

  test('bunyan with its standard serializers fits as it is', async () => {
    const { stream, lines } = memoryStream();
    const log = bunyan.createLogger({ name: 'app', stream, level: 'debug', serializers: bunyan.stdSerializers });
    const entry = await failedCampaignEntry(log, lines);
    expect(entry.msg).toBe('campaign failed');
    expect(entry.err.message).toContain('connection refused by');
  });

  test('bunyan without serializers keeps the error through fromBunyan, password masked', async () => {
    const { stream, lines } = memoryStream();
    const log = bunyan.createLogger({ name: 'app', stream, level: 'debug' });
    const entry = await failedCampaignEntry(fromBunyan(log), lines);
    expect(entry.msg).toBe('campaign failed');
    expect(entry.err.message).toContain('connection refused by');
    expect(entry.err.code).toBe('BACKEND_UNAVAILABLE');
    expect(JSON.stringify(entry)).not.toContain('hunter2');
  });

  test('winston (JSON format) keeps the message and the error through fromWinston', async () => {
    const { stream, lines } = memoryStream();
    const log = winston.createLogger({ level: 'debug', format: winston.format.json(), transports: [new winston.transports.Stream({ stream })] });
    const entry = await failedCampaignEntry(fromWinston(log), lines);
    expect(entry.message).toBe('campaign failed');
    expect(entry.level).toBe('warn');
    expect(entry.err.message).toContain('connection refused by');
    expect(entry.election).toBe('logged');
  });
});
