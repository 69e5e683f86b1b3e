import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { DynamoDbClientStore } from '#adapters/access/client-store';
import { DynamoDbReplayGuard } from '#adapters/access/replay-guard';
import { privateKeySigner } from '#adapters/access/signer-local';
import { createDocumentClient } from '#adapters/aws/dynamodb-client';
import { usedJtiKey } from '#adapters/table/keys';
import { createAuthorizer } from '#auth/authorizer';
import type { ClientRecord } from '#domain/access/client';
import { signJwt } from '#domain/access/jwt';
import type { ReplayGuard } from '#domain/access/ports';
import { LOCAL_CLIENT, type LocalService } from '#local/service-process';
import { ROUTES } from '#routes';
import { combine, type RunFigures, runConcurrently } from './support.ts';

export interface DpopReplayBench {
  withGuard: RunFigures;
  withoutGuard: RunFigures;
  addedP50Ms: number;
  /** Table calls the replay guard made per authorizer invocation (counted, not timed). */
  writesPerCall: number;
  /** Write units one jti record consumes (dynalite's ConsumedCapacity for the same item). */
  writeUnitsPerRecord: number;
  /** USD per million API calls with a DPoP-bound token: the guard's write alone. */
  writeUsdPerMillion: number;
  /** USD per million: the authorizer invocation every such call needs (API Gateway cannot cache it). */
  invocationUsdPerMillion: number;
}

const ISSUER = 'https://bench.invalid';
const PATH = '/v1/payments/credit-transfers';
const METHOD_ARN = `arn:aws:execute-api:local:000000000000:local/live/GET${PATH}`;

const prices = (): Record<string, { usd: number }> =>
  JSON.parse(readFileSync(new URL('../../docs/aws-prices.json', import.meta.url), 'utf8')).prices;

/**
 * The authorizer invoked in-process with a DPoP-bound token and a fresh proof each time, as API
 * Gateway invokes it for every such call: with the replay guard writing each proof's jti to the
 * service's table (one conditional PutItem), and with the jtis kept in memory. Rounds alternate.
 */
export const benchDpopReplay = async (
  service: LocalService,
  options: { invocations: number; concurrency: number; rounds: number; tableName: string },
): Promise<DpopReplayBench> => {
  const keys = privateKeySigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  const documents = createDocumentClient(undefined, service.tableSocket);
  const clients = new DynamoDbClientStore(documents, options.tableName);
  const client = (await clients.get(LOCAL_CLIENT.clientId)) as ClientRecord;
  if (client === undefined) throw new Error(`the seeded client ${LOCAL_CLIENT.clientId} is not in the table`);
  const proofKey = await generateKeyPair('ES256');
  const publicJwk = await exportJWK(proofKey.publicKey);
  const seconds = Math.floor(Date.now() / 1000);
  const token = await signJwt(
    {
      iss: ISSUER,
      sub: client.clientId,
      aud: 'credit-transfers',
      iat: seconds,
      exp: seconds + 3600,
      jti: randomUUID(),
      scope: 'transactions:read',
      tenant: client.tenant,
      client_id: client.clientId,
      client_generation: client.tokenGeneration ?? 0,
      cnf: { jkt: await calculateJwkThumbprint(publicJwk) },
    },
    keys,
  );
  const ath = createHash('sha256').update(token).digest('base64url');
  // Made before the clock runs: signing proofs is the client's cost, not the authorizer's.
  const proofs = async (count: number) =>
    Promise.all(
      Array.from({ length: count }, () =>
        new SignJWT({ htm: 'GET', htu: `${ISSUER}${PATH}`, jti: randomUUID(), ath })
          .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: publicJwk })
          .setIssuedAt()
          .sign(proofKey.privateKey),
      ),
    );

  let guardCalls = 0;
  const tableGuard = new DynamoDbReplayGuard(documents, options.tableName);
  const counted: ReplayGuard = {
    firstUse: (...args) => {
      guardCalls++;
      return tableGuard.firstUse(...args);
    },
  };
  const seen = new Set<string>();
  const inMemory: ReplayGuard = {
    firstUse: async (_kind, owner, jti) =>
      !seen.has(`${owner} ${jti}`) && Boolean(seen.add(`${owner} ${jti}`)),
  };
  const authorizerWith = (replay: ReplayGuard, batch: string[]) => {
    const authorize = createAuthorizer(() => ({
      keys,
      clients,
      issuer: ISSUER,
      audience: 'credit-transfers',
      routes: ROUTES,
      replay,
      publicUrl: ISSUER,
      requireDpop: false,
    }));
    return (index: number) =>
      authorize({
        type: 'REQUEST',
        methodArn: METHOD_ARN,
        resource: PATH,
        path: PATH,
        httpMethod: 'GET',
        headers: { Authorization: `DPoP ${token}`, DPoP: batch[index] as string },
      } as never).then(() => undefined);
  };
  const run = { requests: options.invocations, concurrency: options.concurrency };
  await runConcurrently({ ...run, requests: 200 }, authorizerWith(counted, await proofs(200))); // warm-up
  await runConcurrently({ ...run, requests: 200 }, authorizerWith(inMemory, await proofs(200)));
  guardCalls = 0;
  const withRuns: RunFigures[] = [];
  const withoutRuns: RunFigures[] = [];
  for (let round = 0; round < options.rounds; round++) {
    withRuns.push(await runConcurrently(run, authorizerWith(counted, await proofs(run.requests))));
    withoutRuns.push(await runConcurrently(run, authorizerWith(inMemory, await proofs(run.requests))));
  }
  const writesPerCall = guardCalls / (options.invocations * options.rounds);

  // The same item the guard writes, asked for its consumed capacity.
  const { ConsumedCapacity } = await documents.put({
    TableName: options.tableName,
    Item: { ...usedJtiKey('dpop', 'bench', randomUUID()), type: 'UsedJti', expiresAt: seconds + 300 },
    ConditionExpression: 'attribute_not_exists(pk)',
    ReturnConsumedCapacity: 'TOTAL',
  });
  const writeUnitsPerRecord = ConsumedCapacity?.CapacityUnits ?? 1;
  const price = prices();
  const figures = { withGuard: combine(withRuns), withoutGuard: combine(withoutRuns) };
  return {
    ...figures,
    addedP50Ms: figures.withGuard.p50Ms - figures.withoutGuard.p50Ms,
    writesPerCall,
    writeUnitsPerRecord,
    writeUsdPerMillion:
      writesPerCall * writeUnitsPerRecord * (price.dynamoDbWriteRequestUnit?.usd ?? Number.NaN) * 1e6,
    invocationUsdPerMillion: (price.lambdaRequest?.usd ?? Number.NaN) * 1e6,
  };
};
