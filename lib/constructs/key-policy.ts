import { Aws } from 'aws-cdk-lib';
import {
  AccountRootPrincipal,
  AnyPrincipal,
  Effect,
  PolicyDocument,
  PolicyStatement,
} from 'aws-cdk-lib/aws-iam';
import { KEY_ADMINISTRATION_ACTIONS } from './signing-key.ts';

/**
 * A key policy of its own for every KMS key of the stack, in place of CDK's default (the account
 * root with `kms:*`, which lets any IAM policy of the account use the key for anything): the
 * account administers the key, uses it only as `use` says, and no one but an AWS service acting
 * for a resource may create a grant on it.
 */
export const keyPolicy = (
  use: {
    /** Actions every principal of the account may be given by IAM, only through these services. */
    readonly throughServices?: { readonly actions: readonly string[]; readonly services: readonly string[] };
  } = {},
  ...statements: PolicyStatement[]
): PolicyDocument =>
  new PolicyDocument({
    statements: [
      new PolicyStatement({
        sid: 'AccountAdministersKey',
        principals: [new AccountRootPrincipal()],
        actions: [...KEY_ADMINISTRATION_ACTIONS],
        resources: ['*'],
      }),
      ...(use.throughServices
        ? [
            new PolicyStatement({
              sid: 'AccountUsesKeyThroughServices',
              principals: [new AccountRootPrincipal()],
              actions: [...use.throughServices.actions],
              resources: ['*'],
              conditions: {
                StringEquals: {
                  'kms:ViaService': use.throughServices.services.map(
                    (service) => `${service}.${Aws.REGION}.amazonaws.com`,
                  ),
                  'kms:CallerAccount': Aws.ACCOUNT_ID,
                },
              },
            }),
          ]
        : []),
      grantsOnlyForAwsResources(),
      ...statements,
    ],
  });

/**
 * Control Tower's CT.KMS.PR.3: no grant on the key but one an AWS service creates for a resource
 * (a grant could hand any use of the key to anyone).
 */
export const grantsOnlyForAwsResources = (): PolicyStatement =>
  new PolicyStatement({
    sid: 'GrantsOnlyForAwsResources',
    effect: Effect.DENY,
    principals: [new AnyPrincipal()],
    actions: ['kms:CreateGrant'],
    resources: ['*'],
    conditions: {
      BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' },
    },
  });
