import { generateKeyPairSync } from 'node:crypto';
import { DynamoDbClientStore } from '#adapters/access/client-store';
import { privateKeySigner } from '#adapters/access/signer-local';
import { createDocumentClient } from '#adapters/aws/dynamodb-client';
import { createAuthorizer } from '#auth/authorizer';
import type { ClientRecord } from '#domain/access/client';
import { signJwt } from '#domain/access/jwt';
import type { ClientStore } from '#domain/access/ports';
import { LOCAL_CLIENT, type LocalService } from '#local/service-process';
import { ROUTES } from '#routes';
import { combine, type RunFigures, runConcurrently } from './support.ts';

export interface AuthorizerBench {
  withCheck: RunFigures;
  withoutCheck: RunFigures;
  /** Per invocation, the revocation check's added median latency. */
  addedP50Ms: number;
}

const ISSUER = 'https://bench.invalid';
const AUDIENCE = 'credit-transfers';
const METHOD_ARN = 'arn:aws:execute-api:local:000000000000:local/live/GET/v1/payments/credit-transfers';

/**
 * The authorizer invoked in-process, as API Gateway invokes it on a cache miss, with and without
 * the revocation check: with, the client is read from the service's table (one strongly consistent
 * GetItem through the adapter); without, from memory. Rounds alternate, so both see the same load.
 */
export const benchAuthorizer = async (
  service: LocalService,
  options: { invocations: number; concurrency: number; rounds: number; tableName: string },
): Promise<AuthorizerBench> => {
  const keys = privateKeySigner(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
  const table = new DynamoDbClientStore(
    createDocumentClient(undefined, service.tableSocket),
    options.tableName,
  );
  const client = (await table.get(LOCAL_CLIENT.clientId)) as ClientRecord;
  if (client === undefined) throw new Error(`the seeded client ${LOCAL_CLIENT.clientId} is not in the table`);
  const inMemory: Pick<ClientStore, 'get'> = { get: async () => client };
  const seconds = Math.floor(Date.now() / 1000);
  // Distinct tokens, as distinct callers would send: nothing is cached between invocations anyway.
  const tokens = await Promise.all(
    Array.from({ length: 64 }, (_, index) =>
      signJwt(
        {
          iss: ISSUER,
          sub: client.clientId,
          aud: AUDIENCE,
          iat: seconds,
          exp: seconds + 3600,
          jti: `bench-${index}`,
          scope: 'transactions:read',
          tenant: client.tenant,
          client_id: client.clientId,
          client_generation: client.tokenGeneration ?? 0,
        },
        keys,
      ),
    ),
  );
  const authorizerWith = (clients: Pick<ClientStore, 'get'>) => {
    const authorize = createAuthorizer(() => ({
      keys,
      clients,
      issuer: ISSUER,
      audience: AUDIENCE,
      routes: ROUTES,
      // Bearer tokens only here: no DPoP proof is checked, so no jti is recorded.
      replay: { firstUse: async () => true },
      publicUrl: ISSUER,
      requireDpop: false,
    }));
    return (index: number) =>
      authorize({
        type: 'TOKEN',
        authorizationToken: `Bearer ${tokens[index % tokens.length]}`,
        methodArn: METHOD_ARN,
      }).then(() => undefined);
  };
  const withCheck = authorizerWith(table);
  const withoutCheck = authorizerWith(inMemory);
  const run = { requests: options.invocations, concurrency: options.concurrency };
  await runConcurrently({ ...run, requests: 200 }, withCheck); // warm-up
  await runConcurrently({ ...run, requests: 200 }, withoutCheck);
  const withRuns: RunFigures[] = [];
  const withoutRuns: RunFigures[] = [];
  for (let round = 0; round < options.rounds; round++) {
    withRuns.push(await runConcurrently(run, withCheck));
    withoutRuns.push(await runConcurrently(run, withoutCheck));
  }
  const figures = { withCheck: combine(withRuns), withoutCheck: combine(withoutRuns) };
  return { ...figures, addedP50Ms: figures.withCheck.p50Ms - figures.withoutCheck.p50Ms };
};
