import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/**
 * The stage a function runs in (STAGE, set by the stack) is a dimension of every business
 * metric, so the alarms of one stage never watch another's. EMF lines read from stdout.
 */
let lines: string[] = [];
type Emf = Record<string, unknown> & { _aws: { CloudWatchMetrics: { Dimensions: string[][] }[] } };
const emf = (name: string): Emf[] =>
  lines.map((line) => JSON.parse(line) as Emf).filter((line) => line[name] !== undefined && line._aws);

beforeEach(() => {
  vi.resetModules();
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  vi.stubEnv('POWERTOOLS_DEV', 'false');
  lines = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    for (const line of String(chunk).split('\n')) if (line.trim().startsWith('{')) lines.push(line);
    return true;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const stuckLine = async (): Promise<Emf | undefined> => {
  const { countTransfersStuck, flushMetrics } = await import('#shared/metrics');
  countTransfersStuck(2);
  flushMetrics();
  return emf('TransfersStuck')[0];
};

describe('metrics of a stage', () => {
  it('carry the stage as a dimension beside the service', async () => {
    vi.stubEnv('STAGE', 'prod');
    const line = await stuckLine();
    expect(line).toMatchObject({ TransfersStuck: 2, service: 'credit-transfers', stage: 'prod' });
    expect(line?._aws.CloudWatchMetrics[0]?.Dimensions[0]).toEqual(
      expect.arrayContaining(['service', 'stage']),
    );
  });

  it('carry the stage on single-metric lines too (rejections by reason)', async () => {
    vi.stubEnv('STAGE', 'dev');
    const { countingStatusEvents, flushMetrics } = await import('#shared/metrics');
    await countingStatusEvents({ publish: async () => undefined }).publish([
      {
        eventId: 'e',
        tenant: 't',
        paymentId: 'p',
        sequence: 1,
        status: 'Rejected',
        statusReason: 'InvalidFileFormat',
        date: new Date().toISOString(),
        actor: 'rail',
      },
    ]);
    flushMetrics();
    expect(emf('TransfersRejected')[0]).toMatchObject({ stage: 'dev', reason: 'InvalidFileFormat' });
  });

  it('have no stage dimension where no stage is set (the local runtime)', async () => {
    vi.stubEnv('STAGE', '');
    const line = await stuckLine();
    expect(line?.stage).toBeUndefined();
    expect(line?._aws.CloudWatchMetrics[0]?.Dimensions[0]).toEqual(['service']);
  });
});
