import { createHash } from 'node:crypto';

/** A tenant's request rate: `ratePerSecond` steady, at most `burst` at once after a quiet while. */
export interface TenantRateLimit {
  ratePerSecond: number;
  burst: number;
}

/** The numbers API Gateway's usage plan throttle accepts, and the local gateway with them. */
export const MAX_TENANT_RATE = 10_000;
export const MAX_TENANT_BURST = 5_000;

/** The default on AWS (context tenantRateLimit and tenantBurstLimit): half the stage's 50/100. */
export const DEFAULT_TENANT_RATE_LIMIT: TenantRateLimit = { ratePerSecond: 25, burst: 50 };

export class InvalidTenantRateLimitError extends Error {}

/** A limit as an operator gives it: whole numbers, the burst twice the rate unless given. */
export const tenantRateLimit = (
  ratePerSecond: number,
  burst: number = 2 * ratePerSecond,
): TenantRateLimit => {
  if (!Number.isSafeInteger(ratePerSecond) || ratePerSecond < 1 || ratePerSecond > MAX_TENANT_RATE) {
    throw new InvalidTenantRateLimitError(
      `the rate must be a whole number of requests per second from 1 to ${MAX_TENANT_RATE}`,
    );
  }
  if (!Number.isSafeInteger(burst) || burst < 1 || burst > MAX_TENANT_BURST) {
    throw new InvalidTenantRateLimitError(`the burst must be a whole number from 1 to ${MAX_TENANT_BURST}`);
  }
  return { ratePerSecond, burst };
};

/**
 * The API key value the authorizer hands API Gateway as `usageIdentifierKey` for a tenant: the
 * SHA-256 (hex, 64 characters) of `credit-transfers usage <apiId>/<stage> <tenant>`. It names
 * the tenant's usage plan entry and is no secret (API Gateway reads it only from the authorizer,
 * never from a request); the API and stage are in it because API key values are unique in an
 * account and region, and two stages may share both.
 */
export const usageIdentifierKey = (apiId: string, stage: string, tenant: string): string =>
  createHash('sha256').update(`credit-transfers usage ${apiId}/${stage} ${tenant}`).digest('hex');

/** The API id and stage of a method ARN: `arn:aws:execute-api:{region}:{account}:{apiId}/{stage}/...`. */
export const apiStageOf = (methodArn: string): { apiId: string; stage: string } => {
  const [apiArn, stage] = methodArn.split('/');
  const apiId = apiArn?.split(':')[5];
  if (!apiArn?.startsWith('arn:') || !apiId || !stage)
    throw new Error(`Not an API Gateway method ARN: ${methodArn}`);
  return { apiId, stage };
};
