import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import type { TenantRateLimits } from '#domain/access/ports';
import { type TenantRateLimit, tenantRateLimit } from '#domain/access/tenant-rate-limit';

/**
 * The local service's per-tenant limits: one JSON file in the data folder,
 * `{"tenants": {"<tenant>": {"ratePerSecond": N, "burst": M}}}`, written whole and renamed into
 * place so the gateway never reads half a file. Every tenant is admitted locally: nothing to do.
 */
type LimitsFile = { tenants: Record<string, TenantRateLimit> };

export const readTenantRateLimits = (path: string): Map<string, TenantRateLimit> => {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw error;
  }
  const parsed = JSON.parse(text) as Partial<LimitsFile>;
  return new Map(
    Object.entries(parsed.tenants ?? {}).map(([tenant, limit]) => [
      tenant,
      tenantRateLimit(limit.ratePerSecond, limit.burst),
    ]),
  );
};

export class FileTenantRateLimits implements TenantRateLimits {
  constructor(private readonly path: string) {}

  async get(tenant: string): Promise<TenantRateLimit | undefined> {
    return readTenantRateLimits(this.path).get(tenant);
  }

  async set(tenant: string, limit: TenantRateLimit): Promise<void> {
    const limits = readTenantRateLimits(this.path);
    limits.set(tenant, limit);
    this.write(limits);
  }

  async clear(tenant: string): Promise<boolean> {
    const limits = readTenantRateLimits(this.path);
    if (!limits.delete(tenant)) return false;
    this.write(limits);
    return true;
  }

  async list(): Promise<{ tenant: string; limit: TenantRateLimit }[]> {
    return [...readTenantRateLimits(this.path)]
      .map(([tenant, limit]) => ({ tenant, limit }))
      .sort((a, b) => (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0));
  }

  async admit(): Promise<void> {}

  private write(limits: Map<string, TenantRateLimit>): void {
    const file: LimitsFile = {
      tenants: Object.fromEntries([...limits].sort(([a], [b]) => (a < b ? -1 : 1))),
    };
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, this.path);
  }
}

/**
 * The limits as the gateway sees them: the file is read again when its modification time or
 * size changes, looked at no more than once every `checkEveryMs`, so a limit set while the
 * service runs applies within that time without a read per request.
 */
export const watchedTenantRateLimits = (
  path: string,
  checkEveryMs = 1000,
  now: () => number = Date.now,
): (() => Map<string, TenantRateLimit>) => {
  let limits = new Map<string, TenantRateLimit>();
  let seen = '';
  let checkedAt = Number.NEGATIVE_INFINITY;
  return () => {
    if (now() - checkedAt < checkEveryMs) return limits;
    checkedAt = now();
    let signature = 'absent';
    try {
      const stat = statSync(path);
      signature = `${stat.mtimeMs} ${stat.size} ${stat.ino}`;
    } catch {
      // No file: no tenant has a limit of its own.
    }
    if (signature !== seen) {
      try {
        limits = readTenantRateLimits(path);
        seen = signature;
      } catch (error) {
        // A broken file keeps the limits last read rather than dropping every tenant's limit.
        console.error(`Cannot read ${path}; keeping the per-tenant limits read before`, error);
      }
    }
    return limits;
  };
};
