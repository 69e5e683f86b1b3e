import { Aws, DefaultStackSynthesizer, Fn, Stack } from 'aws-cdk-lib';
import {
  AccountRootPrincipal,
  AnyPrincipal,
  ArnPrincipal,
  Effect,
  PolicyDocument,
  PolicyStatement,
} from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

/** The context value naming the role that administers every KMS key (checked by lib/stage-config.ts). */
export const KEY_ADMIN_ROLE_CONTEXT = 'keyAdminRoleArn';

/**
 * What a service (DynamoDB, AWS Backup) does with a data key on the account's behalf: encrypt and
 * decrypt its data keys, and grant itself their use for the resource it keeps.
 */
export const DATA_KEY_ACTIONS = [
  'kms:Encrypt',
  'kms:Decrypt',
  'kms:ReEncrypt*',
  'kms:GenerateDataKey*',
  'kms:DescribeKey',
  'kms:CreateGrant',
] as const;

/**
 * What the key administrator may do: manage the key, never use it. Neither `kms:*` nor
 * `kms:CreateGrant` (a grant could hand out any use) nor `kms:ReplicateKey` (a replica comes with
 * a policy of its own) nor `kms:PutKeyPolicy` (a policy naming itself could grant itself any use,
 * `kms:Sign` included): a key policy changes only through the deployment (CloudFormation's
 * execution role, from a reviewed template), and every change pages (Monitoring, KeyChanges).
 * Whoever uses a key is named in its policy, beside the code that uses it.
 */
export const KEY_ADMINISTRATION_ACTIONS = [
  'kms:DescribeKey',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:GetPublicKey',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListResourceTags',
  'kms:UpdateKeyDescription',
  'kms:EnableKey',
  'kms:DisableKey',
  'kms:EnableKeyRotation',
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
 * What CloudFormation does to a key of the stack (AWS::KMS::Key's create, update and read
 * handlers), and `kms:ScheduleKeyDeletion` for a key removed with the stack: the deployment
 * manages the key as the template says, nothing else.
 */
const DEPLOYMENT_ACTIONS = [
  'kms:DescribeKey',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:UpdateKeyDescription',
  'kms:EnableKey',
  'kms:DisableKey',
  'kms:EnableKeyRotation',
  'kms:DisableKeyRotation',
  'kms:TagResource',
  'kms:UntagResource',
] as const;

export interface KeyUse {
  /** Actions every principal of the account may be given by IAM, only through these services. */
  readonly throughServices?: { readonly actions: readonly string[]; readonly services: readonly string[] };
  /** Actions IAM policies of the account may grant on the key: only ones that reveal nothing (GetPublicKey). */
  readonly throughIam?: readonly string[];
  /** The stack deletes the key when it goes (RemovalPolicy.DESTROY): its deployment schedules the deletion. */
  readonly deletedWithStack?: boolean;
}

/**
 * The statements that keep a key managed, for every KMS key of the stack, in place of CDK's
 * default (the account root with `kms:*`, which lets any IAM administrator of the account grant
 * itself any use of the key, signing tokens included):
 * - the key administrator role (`-c keyAdminRoleArn=...`) administers it, but never puts its policy;
 * - the deployment (CloudFormation's execution role) manages it as the template says;
 * - the account root user, and no IAM policy, may read it and put its policy: see below;
 * - no grant but one an AWS service creates for a resource.
 */
export const keyAdministration = (scope: Construct, use: KeyUse = {}): PolicyStatement[] => {
  const adminRoleArn = scope.node.tryGetContext(KEY_ADMIN_ROLE_CONTEXT) as string | undefined;
  return [
    ...(adminRoleArn === undefined || adminRoleArn === ''
      ? []
      : [
          new PolicyStatement({
            sid: 'KeyAdministratorAdministersKey',
            principals: [new ArnPrincipal(adminRoleArn)],
            actions: [...KEY_ADMINISTRATION_ACTIONS],
            resources: ['*'],
          }),
          // Explicit, so no later statement (nor a mistake in one) can give the administrator a
          // policy of its own making.
          new PolicyStatement({
            sid: 'KeyAdministratorCannotPutPolicy',
            effect: Effect.DENY,
            principals: [new ArnPrincipal(adminRoleArn)],
            actions: ['kms:PutKeyPolicy'],
            resources: ['*'],
          }),
        ]),
    new PolicyStatement({
      sid: 'DeploymentManagesKey',
      principals: [new ArnPrincipal(deploymentRoleArn(scope))],
      actions: [...DEPLOYMENT_ACTIONS, ...(use.deletedWithStack ? ['kms:ScheduleKeyDeletion'] : [])],
      resources: ['*'],
    }),
    // What AWS needs to keep the key manageable, and only that: KMS refuses a policy that names
    // no one who may put the next one (the key policy lockout safety check), and a key whose
    // named roles are all deleted can be managed again only by the account root user, the one
    // principal that cannot be deleted. So the root user itself (aws:PrincipalType Account: no
    // IAM user or role, whatever its IAM policies say) may read the key and put its policy,
    // for that emergency; it cannot use the key without putting a policy that says so.
    new PolicyStatement({
      sid: 'RootUserRecoversKey',
      principals: [new AccountRootPrincipal()],
      actions: ['kms:DescribeKey', 'kms:GetKeyPolicy', 'kms:PutKeyPolicy'],
      resources: ['*'],
      conditions: { StringEquals: { 'aws:PrincipalType': 'Account' } },
    }),
    ...(use.throughIam === undefined
      ? []
      : [
          new PolicyStatement({
            sid: 'AccountGrantsReadingByIam',
            principals: [new AccountRootPrincipal()],
            actions: [...use.throughIam],
            resources: ['*'],
          }),
        ]),
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
  ];
};

/** A key policy: the administration statements, then the key's own uses. */
export const keyPolicy = (
  scope: Construct,
  use: KeyUse = {},
  ...statements: PolicyStatement[]
): PolicyDocument => new PolicyDocument({ statements: [...keyAdministration(scope, use), ...statements] });

/**
 * The role CloudFormation deploys the stack with (the CDK bootstrap's execution role): it creates
 * every key, so the lockout safety check needs it in the policy to let it put the next one.
 */
export const deploymentRoleArn = (scope: Construct): string => {
  const synthesizer = Stack.of(scope).synthesizer;
  if (!(synthesizer instanceof DefaultStackSynthesizer)) {
    throw new Error(
      'The key policies name the CDK bootstrap execution role: deploy with the default synthesizer',
    );
  }
  // The ARN holds ${AWS::AccountId} and the like, which only Fn::Sub resolves in a template.
  return Fn.sub(synthesizer.cloudFormationExecutionRoleArn);
};

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
