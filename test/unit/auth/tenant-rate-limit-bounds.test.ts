import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  FileTenantRateLimits,
  readTenantRateLimits,
  watchedTenantRateLimits,
} from '#adapters/access/tenant-rate-limit-file';
import { apiStageOf, InvalidTenantRateLimitError, tenantRateLimit } from '#domain/access/tenant-rate-limit';
import { TenantRateLimiter } from '#local/api-gateway';

/**
 * The per-tenant limit at its bounds: the numbers an operator may give (those API Gateway's usage
 * plans accept), the local gateway's token bucket, and the limits file as the gateway watches it.
 */
describe('a tenant rate limit as an operator gives it', () => {
  it('takes a whole rate from 1 to 10000 and a whole burst from 1 to 5000, the burst twice the rate unless given', () => {
    expect(tenantRateLimit(1)).toEqual({ ratePerSecond: 1, burst: 2 });
    expect(tenantRateLimit(2500)).toEqual({ ratePerSecond: 2500, burst: 5000 });
    expect(tenantRateLimit(10_000, 5000)).toEqual({ ratePerSecond: 10_000, burst: 5000 });
    expect(tenantRateLimit(3, 1)).toEqual({ ratePerSecond: 3, burst: 1 });
  });

  it.each([
    [0, 1],
    [10_001, 1],
    [1.5, 3],
    [Number.NaN, 1],
  ])('refuses the rate %s', (rate, burst) => {
    expect(() => tenantRateLimit(rate, burst)).toThrow(InvalidTenantRateLimitError);
    expect(() => tenantRateLimit(rate, burst)).toThrow(
      'the rate must be a whole number of requests per second from 1 to 10000',
    );
  });

  it.each([[0], [5001], [2.5], [Number.POSITIVE_INFINITY]])('refuses the burst %s', (burst) => {
    expect(() => tenantRateLimit(1, burst)).toThrow('the burst must be a whole number from 1 to 5000');
  });

  it('refuses a rate whose default burst would pass 5000', () => {
    expect(() => tenantRateLimit(2501)).toThrow(/burst must be/);
  });
});

describe('the API and stage a tenant limit applies to, from the method ARN the authorizer is given', () => {
  it('are read from an execute-api ARN, and anything else is refused', () => {
    expect(apiStageOf('arn:aws:execute-api:eu-west-1:123456789012:api123/dev/GET/v1/x')).toEqual({
      apiId: 'api123',
      stage: 'dev',
    });
    for (const notAnArn of [
      'urn:aws:execute-api:eu-west-1:123456789012:api123/dev/GET',
      'arn:aws:execute-api:eu-west-1:123456789012:api123',
      'arn:aws:execute-api:eu-west-1:123456789012:/dev/GET',
    ]) {
      expect(() => apiStageOf(notAnArn)).toThrow(`Not an API Gateway method ARN: ${notAnArn}`);
    }
  });
});

describe("the local gateway's token bucket per tenant", () => {
  const limit = { ratePerSecond: 2, burst: 4 };

  it('holds at most the burst however long the tenant was quiet, and refills at the rate', () => {
    let now = 1_000_000;
    const limiter = new TenantRateLimiter(limit, () => now);
    const takeAll = () => {
      const answers: number[] = [];
      for (let request = 0; request < 10; request++) answers.push(limiter.take('acme'));
      return answers.filter((wait) => wait === 0).length;
    };
    expect(takeAll()).toBe(4);
    // An hour quiet: the bucket is full again, not 7200 tokens deep.
    now += 3_600_000;
    expect(takeAll()).toBe(4);
    expect(limiter.take('acme')).toBe(1);
    // Half a second refills one token at 2 a second.
    now += 500;
    expect(limiter.take('acme')).toBe(0);
    expect(limiter.take('acme')).toBe(1);
  });

  it("keeps each tenant's bucket apart, and gives a tenant with a limit of its own that limit", () => {
    const now = 5_000;
    const limiter = new TenantRateLimiter(
      limit,
      () => now,
      () => new Map([['big', { ratePerSecond: 1, burst: 10 }]]),
    );
    for (let request = 0; request < 4; request++) expect(limiter.take('acme')).toBe(0);
    expect(limiter.take('acme')).toBe(1);
    for (let request = 0; request < 10; request++) expect(limiter.take('big')).toBe(0);
    expect(limiter.take('big')).toBe(1);
    expect(limiter.take('other')).toBe(0);
  });
});

describe('the limits file as the local gateway watches it', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'tenant-limits-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  const limitsFile = (acme: number) =>
    `${JSON.stringify({ tenants: { acme: { ratePerSecond: acme, burst: 2 * acme } } })}\n`;

  it('sees a change of the same size, written in place', async () => {
    const path = join(folder, 'same-size.json');
    await writeFile(path, limitsFile(3));
    const read = watchedTenantRateLimits(path, 0);
    expect(read().get('acme')).toEqual({ ratePerSecond: 3, burst: 6 });
    const before = await stat(path);
    await writeFile(path, limitsFile(4));
    expect((await stat(path)).size).toBe(before.size);
    // Even were the clock too coarse to tell the two writes apart, the time differs here.
    await utimes(path, before.atime, new Date(before.mtimeMs + 2000));
    expect(read().get('acme')).toEqual({ ratePerSecond: 4, burst: 8 });
  });

  it('sees a file of the same size and time renamed into place (another file)', async () => {
    const path = join(folder, 'renamed.json');
    const limits = new FileTenantRateLimits(path);
    await limits.set('acme', { ratePerSecond: 3, burst: 6 });
    // Both files with one whole-second time: only the file itself (its inode) differs.
    const sameTime = 2_000_000_000;
    await utimes(path, sameTime, sameTime);
    const read = watchedTenantRateLimits(path, 0);
    expect(read().get('acme')).toEqual({ ratePerSecond: 3, burst: 6 });
    const before = await stat(path);
    await limits.set('acme', { ratePerSecond: 4, burst: 8 });
    await utimes(path, sameTime, sameTime);
    const after = await stat(path);
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
    expect(read().get('acme')).toEqual({ ratePerSecond: 4, burst: 8 });
  });

  it('looks at the file no more than once in its interval, and keeps the last limits when the file breaks', async () => {
    const path = join(folder, 'interval.json');
    await writeFile(path, limitsFile(3));
    let now = 0;
    const read = watchedTenantRateLimits(path, 1000, () => now);
    expect(read().get('acme')?.ratePerSecond).toBe(3);
    await writeFile(path, limitsFile(5));
    now = 999;
    expect(read().get('acme')?.ratePerSecond).toBe(3);
    now = 1999;
    expect(read().get('acme')?.ratePerSecond).toBe(5);

    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await writeFile(path, '{"tenants": {');
    now = 3000;
    expect(read().get('acme')?.ratePerSecond).toBe(5);
    expect(error).toHaveBeenCalledWith(
      expect.stringMatching(/^Cannot read .*interval\.json/),
      expect.anything(),
    );
    error.mockRestore();

    await rm(path);
    now = 4000;
    expect(read().size).toBe(0);
  });
});

describe('the limits file as `npm run clients -- set-limit` keeps it', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'tenant-limits-file-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('is written readable by its owner only, tenants in order, and lists them in order', async () => {
    const path = join(folder, 'limits.json');
    const limits = new FileTenantRateLimits(path);
    for (const tenant of ['zeta', 'acme', 'globex']) await limits.set(tenant, { ratePerSecond: 1, burst: 2 });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(Object.keys(JSON.parse(await readFile(path, 'utf8')).tenants)).toEqual(['acme', 'globex', 'zeta']);
    expect((await limits.list()).map(({ tenant }) => tenant)).toEqual(['acme', 'globex', 'zeta']);
  });

  it('lists a file written by hand in tenant order too', async () => {
    const path = join(folder, 'by-hand.json');
    const limit = { ratePerSecond: 1, burst: 2 };
    await writeFile(path, JSON.stringify({ tenants: { zeta: limit, acme: limit, mid: limit, beta: limit } }));
    expect((await new FileTenantRateLimits(path).list()).map(({ tenant }) => tenant)).toEqual([
      'acme',
      'beta',
      'mid',
      'zeta',
    ]);
  });

  it('says whether a tenant had a limit to clear', async () => {
    const limits = new FileTenantRateLimits(join(folder, 'clear.json'));
    await limits.set('acme', { ratePerSecond: 1, burst: 2 });
    expect(await limits.clear('acme')).toBe(true);
    expect(await limits.clear('acme')).toBe(false);
    expect(await limits.get('acme')).toBeUndefined();
  });

  it('is no limit at all when absent, and an error when it cannot be read', async () => {
    expect(readTenantRateLimits(join(folder, 'absent.json')).size).toBe(0);
    const folderInstead = join(folder, 'a-folder.json');
    await mkdir(folderInstead);
    expect(() => readTenantRateLimits(folderInstead)).toThrow(/EISDIR/);
  });
});
