import { performance } from 'node:perf_hooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { withRotatedSecret } from '#domain/access/client';
import { hashClientSecret } from '#domain/access/client-secret';
import { issueAccessToken, type TokenIssuerDependencies } from '#domain/access/issue-access-token';
import { InvalidClientError } from '#domain/access/token-errors';
import { systemClock } from '#domain/commons/ports';
import {
  AUDIENCE,
  CLIENT,
  type InMemoryClientStore,
  ISSUER,
  issuerSettings,
  RecordingThrottle,
  storeWithClient,
  testSigner,
} from './fakes.ts';

/**
 * An unknown client id, a wrong secret and a wrong secret for a client whose previous secret is
 * still in its grace period must take the same time to refuse, or response times tell which ids
 * exist. The kinds are measured in turn, many times, so a load that comes and goes hits each
 * alike; their medians must agree within a margin far wider than noise and far narrower than one
 * scrypt (skipping it for an unknown id makes that request some thousand times faster). On an idle
 * machine the medians agree within 15%; under a full test run on two busy cores one kind has been
 * seen at twice another, so the margin is 3.
 */
const ROUNDS = 15;
const TOLERATED_RATIO = 3;

let dependencies: TokenIssuerDependencies;
/** The same, with the source address's budget of secret checks spent: unknown ids derive nothing. */
let pastBudget: TokenIssuerDependencies;

const refusalMilliseconds = async (
  clientId: string,
  secret: string,
  issuer: () => TokenIssuerDependencies = () => dependencies,
): Promise<number> => {
  const started = performance.now();
  const refusal = await issueAccessToken(issuer(), {
    credentials: { clientId, secret, method: 'client_secret_post' },
    scope: undefined,
    dpopProof: undefined,
    sourceAddress: '203.0.113.7',
  }).catch((error: unknown) => error);
  const elapsed = performance.now() - started;
  expect(refusal).toBeInstanceOf(InvalidClientError);
  return elapsed;
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

beforeAll(async () => {
  const store: InMemoryClientStore = await storeWithClient();
  const rotating = { ...CLIENT, clientId: 'rotating-client' };
  await store.put({
    ...withRotatedSecret(
      {
        clientId: rotating.clientId,
        secretHash: await hashClientSecret(rotating.secret),
        scopes: ['transactions:read'],
        tenant: rotating.tenant,
        createdAt: new Date().toISOString(),
      },
      await hashClientSecret('the-next-secret-value'),
      86_400,
      new Date(),
    ),
  });
  // Every attempt allowed: the throttle is not what is timed here.
  dependencies = {
    clients: store,
    keys: testSigner(),
    issuer: ISSUER,
    audience: AUDIENCE,
    throttle: new RecordingThrottle(),
    ...issuerSettings(),
    clock: systemClock,
  };
  const spent = new RecordingThrottle();
  spent.addressBudget = 0;
  pastBudget = { ...dependencies, throttle: spent };
});

describe('refusing client authentication', () => {
  it('takes the same time for an unknown id (within its address budget or past it), a wrong secret and a wrong secret during a rotation', async () => {
    const kinds = {
      unknownClient: () => refusalMilliseconds('no-such-client', 'not-the-secret-at-all'),
      unknownClientPastBudget: () =>
        refusalMilliseconds('no-such-client', 'not-the-secret-at-all', () => pastBudget),
      wrongSecret: () => refusalMilliseconds(CLIENT.clientId, 'not-the-secret-at-all'),
      wrongSecretPastBudget: () =>
        refusalMilliseconds(CLIENT.clientId, 'not-the-secret-at-all', () => pastBudget),
      wrongSecretDuringRotation: () => refusalMilliseconds('rotating-client', 'not-the-secret-at-all'),
    };
    const samples: Record<keyof typeof kinds, number[]> = {
      unknownClient: [],
      unknownClientPastBudget: [],
      wrongSecret: [],
      wrongSecretPastBudget: [],
      wrongSecretDuringRotation: [],
    };
    for (const measure of Object.values(kinds)) await measure(); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      // A different order each round, so no kind always follows the same one.
      const order = Object.keys(kinds) as (keyof typeof kinds)[];
      if (round % 2 === 1) order.reverse();
      for (const kind of order) samples[kind].push(await kinds[kind]());
    }

    const medians = Object.fromEntries(
      Object.entries(samples).map(([kind, values]) => [kind, median(values)]),
    );
    const slowest = Math.max(...Object.values(medians));
    const fastest = Math.min(...Object.values(medians));
    expect(slowest / fastest, `medians in ms: ${JSON.stringify(medians)}`).toBeLessThan(TOLERATED_RATIO);
  }, 180_000);
});
