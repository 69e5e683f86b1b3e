import { RemovalPolicy } from 'aws-cdk-lib';
import { AccountRootPrincipal, type IPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/**
 * What the account may do with the signing key through IAM: administer it and read its public
 * key, never sign. Neither `kms:*` nor `kms:CreateGrant` (a grant could hand out kms:Sign).
 * Whoever may sign is named in the key policy itself (`allowSigning`).
 */
export const KEY_ADMINISTRATION_ACTIONS = [
  'kms:DescribeKey',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:GetPublicKey',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:UpdateKeyDescription',
  'kms:EnableKey',
  'kms:DisableKey',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:CreateAlias',
  'kms:UpdateAlias',
  'kms:DeleteAlias',
  'kms:RevokeGrant',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
] as const;

/**
 * The asymmetric KMS key that signs access tokens (RS256). The private key never leaves KMS;
 * verifiers read the public key. Retained with the stack: deleting it would invalidate every
 * token in flight and could not be undone after the pending window.
 */
export class TokenSigningKey extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Signs the access tokens of the credit transfer API (RS256)',
      keySpec: KeySpec.RSA_2048,
      keyUsage: KeyUsage.SIGN_VERIFY,
      removalPolicy: RemovalPolicy.RETAIN,
      // A policy of our own replaces CDK's default, which gives the account root kms:*: with it,
      // any IAM policy granting kms:Sign could mint tokens.
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            sid: 'AccountAdministersKeyWithoutSigning',
            principals: [new AccountRootPrincipal()],
            actions: [...KEY_ADMINISTRATION_ACTIONS],
            resources: ['*'],
          }),
        ],
      }),
    });
  }

  /** Names a principal in the key policy as allowed to sign; no IAM policy can add another. */
  allowSigning(principal: IPrincipal): void {
    this.key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'TokenFunctionSigns',
        principals: [principal],
        actions: ['kms:Sign'],
        resources: ['*'],
      }),
    );
  }
}
