import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesize, synthesized } from './synth.ts';
import {
  allowedActions,
  functionOfMethod,
  getAttTargets,
  methodsByRoute,
  type Resource,
  refOf,
  resourcesOf,
  type Statement,
  statementsOfFunction,
} from './template-queries.ts';

/**
 * The token signing keys as synthesized: every key multi-Region and retained, the generation's key
 * and the one before it held for a rotation, their ids handed to exactly the functions that use
 * them, and a replica of each in the backup region when there is one.
 */
let dev: Synthesized;
let rotating: Synthesized;
let replicated: Synthesized;

beforeAll(async () => {
  [dev, rotating, replicated] = await synthesized(
    {},
    { signingKeyGeneration: '3' },
    { signingKeyGeneration: '2', backupRegion: 'eu-central-1' },
  );
}, SYNTH_TIMEOUT_MS);

const signingKeys = (template: Template): [string, Resource][] =>
  [...resourcesOf(template, 'AWS::KMS::Key')].filter(([, key]) => key.Properties.KeyUsage === 'SIGN_VERIFY');

const policyOf = (key: Resource): Statement[] =>
  (key.Properties.KeyPolicy as { Statement: Statement[] }).Statement;

const actionsOf = (statement: Statement): string[] => [statement.Action].flat();

const functionOf = (template: Template, route: string): string => {
  const method = methodsByRoute(template).get(route);
  if (method === undefined) throw new Error(`no method ${route}`);
  return functionOfMethod(template, method);
};

const authorizerOf = (template: Template): string => {
  const [authorizer] = resourcesOf(template, 'AWS::ApiGateway::Authorizer').values();
  const functions = resourcesOf(template, 'AWS::Lambda::Function');
  const found = getAttTargets(authorizer?.Properties.AuthorizerUri).find((id) => functions.has(id));
  if (found === undefined) throw new Error('no authorizer function');
  return found;
};

const environmentOf = (template: Template, functionId: string): Record<string, unknown> =>
  (
    (resourcesOf(template, 'AWS::Lambda::Function').get(functionId)?.Properties.Environment ?? {}) as {
      Variables?: Record<string, unknown>;
    }
  ).Variables ?? {};

/** The function ids that read the keys: the token function, the key set and the authorizer. */
const keyUsers = (template: Template) => ({
  token: functionOf(template, 'POST /oauth/token'),
  keySet: functionOf(template, 'GET /.well-known/jwks.json'),
  authorizer: authorizerOf(template),
});

describe('the token signing keys', () => {
  it('are multi-Region ECC_NIST_P256 SIGN_VERIFY keys (ES256), retained with the stack', () => {
    for (const { template } of [dev, rotating, replicated]) {
      for (const [, key] of signingKeys(template)) {
        expect(key.Properties).toMatchObject({
          KeySpec: 'ECC_NIST_P256',
          KeyUsage: 'SIGN_VERIFY',
          MultiRegion: true,
        });
        expect(key.DeletionPolicy).toBe('Retain');
        expect(key.UpdateReplacePolicy).toBe('Retain');
      }
    }
  });

  it("hold one key on a first generation, and the generation's key with the one before it later", () => {
    expect(signingKeys(dev.template)).toHaveLength(1);
    const descriptions = signingKeys(rotating.template).map(([, key]) => key.Properties.Description);
    expect(descriptions).toEqual([
      expect.stringMatching(/generation 2$/),
      expect.stringMatching(/generation 3$/),
    ]);
  });

  it('name every key, oldest first, to the token function, the key set and the authorizer, and to no other function', () => {
    for (const { template } of [dev, rotating]) {
      const keyIds = signingKeys(template).map(([id]) => id);
      const users = keyUsers(template);
      for (const id of resourcesOf(template, 'AWS::Lambda::Function').keys()) {
        const value = environmentOf(template, id).SIGNING_KEY_IDS;
        if (!Object.values(users).includes(id)) {
          expect(value, id).toBeUndefined();
          continue;
        }
        const named = JSON.stringify(value);
        const positions = keyIds.map((keyId) => named.indexOf(`{"Ref":"${keyId}"}`));
        expect(
          positions.every((position) => position >= 0),
          id,
        ).toBe(true);
        expect(
          [...positions].sort((a, b) => a - b),
          id,
        ).toEqual(positions);
      }
    }
  });

  it('let only the token function sign, with every key, and the key users read the schedule from the table', () => {
    const { template } = rotating;
    const users = keyUsers(template);
    const [tokenRole] = getAttTargets(
      resourcesOf(template, 'AWS::Lambda::Function').get(users.token)?.Properties.Role,
    );
    for (const [, key] of signingKeys(template)) {
      const signers = policyOf(key).filter((s) => s.Effect === 'Allow' && actionsOf(s).includes('kms:Sign'));
      expect(signers.map((s) => (s as Statement & { Principal: unknown }).Principal)).toEqual([
        { AWS: { 'Fn::GetAtt': [tokenRole, 'Arn'] } },
      ]);
      const rootActions = policyOf(key)
        .filter((s) => JSON.stringify((s as Statement & { Principal: unknown }).Principal).includes(':root'))
        .flatMap(actionsOf);
      for (const forbidden of ['kms:*', 'kms:Sign', 'kms:CreateGrant', 'kms:ReplicateKey']) {
        expect(rootActions).not.toContain(forbidden);
      }
    }
    for (const [name, id] of Object.entries(users)) {
      const actions = allowedActions(statementsOfFunction(template, id));
      expect(actions.has('kms:GetPublicKey'), name).toBe(true);
      expect(actions.has('kms:Sign'), name).toBe(name === 'token');
      expect(actions.has('dynamodb:GetItem'), name).toBe(true);
    }
  });

  it('are named to operators in the outputs, oldest first, for npm run keys -- rotate', () => {
    const outputs = (rotating.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;
    const [older, newer] = signingKeys(rotating.template).map(([id]) => id);
    expect(refOf(outputs.SigningKeyId?.Value)).toBe(newer);
    expect(JSON.stringify(outputs.SigningKeyIds?.Value)).toBe(
      JSON.stringify({ 'Fn::Join': ['', [{ Ref: older }, ',', { Ref: newer }]] }),
    );
  });
});

describe('with a backup region', () => {
  const replicas = (template: Template) => [...resourcesOf(template, 'Custom::AWS').values()];

  it('replicates every key there once, with a policy that lets no one sign and gives no one kms:*', () => {
    expect(replicas(dev.template)).toEqual([]);
    const created = replicas(replicated.template).map((replica) => JSON.stringify(replica.Properties.Create));
    expect(created).toHaveLength(signingKeys(replicated.template).length);
    for (const [index, [keyId]] of signingKeys(replicated.template).entries()) {
      const create = created[index] as string;
      expect(create).toContain('\\"action\\":\\"replicateKey\\"');
      expect(create).toContain('\\"ReplicaRegion\\":\\"eu-central-1\\"');
      expect(create).toContain(keyId);
      expect(create).not.toContain('kms:Sign');
      expect(create).not.toContain('kms:*');
      expect(create).toContain('RootUserRecoversKey');
      expect(create).toContain('ReplicatorPutsReplicaPolicy');
    }
    for (const replica of replicas(replicated.template)) {
      expect(replica.DeletionPolicy ?? 'Delete').toBe('Delete');
      // Nothing runs on delete: the replica stays, as the key does.
      expect(replica.Properties.Delete).toBeUndefined();
    }
  });

  it('lets the replicating role replicate into the backup region only, and nothing else', () => {
    for (const [, key] of signingKeys(replicated.template)) {
      const replicating = policyOf(key).filter((s) => actionsOf(s).includes('kms:ReplicateKey'));
      expect(replicating).toHaveLength(1);
      expect(replicating[0]).toMatchObject({
        Effect: 'Allow',
        Condition: { StringEquals: { 'kms:ReplicaRegion': 'eu-central-1' } },
      });
      expect(actionsOf(replicating[0] as Statement)).toEqual(['kms:ReplicateKey']);
    }
  });

  it('synthesizes with no unacknowledged cdk-nag finding', () => {
    expect(replicated.nagFindings).toEqual([]);
  });

  it('refuses a backupRegion that is not a region name', () => {
    expect(() => synthesize({ backupRegion: 'Frankfurt' })).toThrow(
      /backupRegion must be an AWS region name/,
    );
  });
});
