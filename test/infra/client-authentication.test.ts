import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesize, synthesized } from './synth.ts';
import {
  allowedActions,
  functionOfMethod,
  methodsByRoute,
  type Resource,
  refOf,
  resourcesOf,
  type Statement,
  statementsOfFunction,
} from './template-queries.ts';

/**
 * FAPI 2.0 on the template: a new stage's signing keys are ECC_NIST_P256 (ES256) from the first;
 * a stage with RS256 keys deployed names its first ES256 generation (signingKeyEs256FromGeneration),
 * those before staying RSA_2048, so it moves through its usual rotation; `-c dpopNonces=true`
 * gives the token function, and it alone, a nonce secret.
 */
let plain: Synthesized;
let fapi: Synthesized;
let keptRs256: Synthesized;

beforeAll(async () => {
  [plain, fapi, keptRs256] = await synthesized(
    {},
    { signingKeyGeneration: '2', signingKeyEs256FromGeneration: '2', dpopNonces: 'true' },
    { signingKeyGeneration: '2', signingKeyEs256FromGeneration: '3' },
  );
}, SYNTH_TIMEOUT_MS);

const signingKeys = (template: Template): Resource[] =>
  [...resourcesOf(template, 'AWS::KMS::Key').values()].filter(
    (key) => key.Properties.KeyUsage === 'SIGN_VERIFY',
  );

const functionOf = (template: Template, route: string): string => {
  const method = methodsByRoute(template).get(route);
  if (method === undefined) throw new Error(`no method ${route}`);
  return functionOfMethod(template, method);
};

const environmentOf = (template: Template, functionId: string): Record<string, unknown> =>
  (
    (resourcesOf(template, 'AWS::Lambda::Function').get(functionId)?.Properties.Environment ?? {}) as {
      Variables?: Record<string, unknown>;
    }
  ).Variables ?? {};

const secretReaders = (template: Template, secretId: string): string[] =>
  [...resourcesOf(template, 'AWS::Lambda::Function').keys()].filter((id) =>
    statementsOfFunction(template, id).some(
      (statement: Statement) =>
        allowedActions([statement]).has('secretsmanager:GetSecretValue') &&
        JSON.stringify(statement.Resource).includes(`"${secretId}"`),
    ),
  );

describe('the token signing algorithm', () => {
  it('is ES256 (ECC_NIST_P256) from the first key of a stage that names no ES256 generation', () => {
    expect(
      signingKeys(plain.template).map((key) => [key.Properties.KeySpec, key.Properties.Description]),
    ).toEqual([['ECC_NIST_P256', expect.stringMatching(/\(ES256\), generation 1$/)]]);
  });

  it('stays RS256 (RSA_2048) on the deployed generations of a stage that names a later ES256 one', () => {
    expect(
      signingKeys(keptRs256.template).map((key) => [key.Properties.KeySpec, key.Properties.Description]),
    ).toEqual([
      ['RSA_2048', expect.stringMatching(/\(RS256\), generation 1$/)],
      ['RSA_2048', expect.stringMatching(/\(RS256\), generation 2$/)],
    ]);
  });

  it('is ES256 (ECC_NIST_P256) from the named generation, the one before it staying RSA_2048', () => {
    const keys = signingKeys(fapi.template);
    expect(keys.map((key) => [key.Properties.KeySpec, key.Properties.Description])).toEqual([
      ['RSA_2048', expect.stringMatching(/\(RS256\), generation 1$/)],
      ['ECC_NIST_P256', expect.stringMatching(/\(ES256\), generation 2$/)],
    ]);
    for (const key of keys) {
      expect(key.Properties).toMatchObject({ KeyUsage: 'SIGN_VERIFY', MultiRegion: true });
      expect(key.DeletionPolicy).toBe('Retain');
    }
  });

  it('refuses a generation that is not a whole number from 1', () => {
    expect(() => synthesize({ signingKeyEs256FromGeneration: '0' })).toThrow(/signingKeyEs256FromGeneration/);
  });
});

describe('DPoP server nonces', () => {
  it('are off without dpopNonces: no nonce secret, no function told of one', () => {
    const nonceSecrets = [...resourcesOf(plain.template, 'AWS::SecretsManager::Secret').values()].filter(
      (secret) => JSON.stringify(secret.Properties.Description).includes('DPoP'),
    );
    expect(nonceSecrets).toEqual([]);
    for (const id of resourcesOf(plain.template, 'AWS::Lambda::Function').keys()) {
      expect(environmentOf(plain.template, id).DPOP_NONCE_SECRET_ARN, id).toBeUndefined();
    }
  });

  it('with dpopNonces=true: a generated secret that only the token function is told of and may read', () => {
    const [secretId, secret] =
      [...resourcesOf(fapi.template, 'AWS::SecretsManager::Secret').entries()].find(([, candidate]) =>
        JSON.stringify(candidate.Properties.Description).includes('DPoP'),
      ) ?? [];
    expect(secret?.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 64 });
    const token = functionOf(fapi.template, 'POST /oauth/token');
    const told = [...resourcesOf(fapi.template, 'AWS::Lambda::Function').keys()].filter(
      (id) => environmentOf(fapi.template, id).DPOP_NONCE_SECRET_ARN !== undefined,
    );
    expect(told).toEqual([token]);
    expect(refOf(environmentOf(fapi.template, token).DPOP_NONCE_SECRET_ARN)).toBe(secretId);
    expect(secretReaders(fapi.template, secretId as string)).toEqual([token]);
  });

  it('synthesize with no unacknowledged cdk-nag finding', () => {
    expect(fapi.nagFindings).toEqual([]);
  });
});
