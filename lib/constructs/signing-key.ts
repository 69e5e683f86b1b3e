import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  type IGrantable,
  type IPrincipal,
  PolicyStatement,
  Role,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { acknowledgeCustomResourceProvider } from './custom-resource-provider.ts';
import { keyAdministration, keyPolicy } from './key-policy.ts';
import { nagRendered } from './nag-finding.ts';

/** IAM may grant reading a signing key's public key (the key set, the authorizer); nothing else. */
const SIGNING_KEY_USE = { throughIam: ['kms:GetPublicKey', 'kms:DescribeKey'] } as const;

export interface TokenSigningKeysProps {
  /** `signingKeyGeneration`: the newest key; the one before it is held too, for a rotation. */
  readonly generation: number;
  /**
   * `signingKeyEs256FromGeneration`: the first generation whose key is ECC_NIST_P256 (ES256, FAPI
   * 2.0); the generations before it are RSA_2048 (RS256). Absent: 1, every generation is ES256.
   * Per generation because KMS cannot change a key's spec: a deployed key keeps the one it has.
   */
  readonly es256FromGeneration?: number;
  /** A region for a replica of every key (same key id and material), for a restore there. */
  readonly backupRegion?: string;
}

/** The first ES256 generation of a stage that names none: its first key (FAPI 2.0). */
export const DEFAULT_ES256_FROM_GENERATION = 1;

/** The key spec and JWS algorithm of a generation's key. */
export const signingKeySpec = (
  generation: number,
  es256FromGeneration: number = DEFAULT_ES256_FROM_GENERATION,
): { keySpec: KeySpec; algorithm: 'RS256' | 'ES256' } =>
  generation >= es256FromGeneration
    ? { keySpec: KeySpec.ECC_NIST_P256, algorithm: 'ES256' }
    : { keySpec: KeySpec.RSA_2048, algorithm: 'RS256' };

/**
 * The asymmetric KMS keys that sign access tokens (RS256 or ES256, by generation): the key of the stage's signing key
 * generation and the one before it, so a rotation can publish the new key before it signs and keep
 * the old one until its tokens expire. Which one signs is no deploy's business: the functions
 * follow the signing key schedule in the table (docs/keys.md). Every key is multi-Region, with a
 * replica in the backup region when there is one, and retained with the stack: deleting a key
 * would invalidate every token it signed, and could not be undone after the pending window.
 */
export class TokenSigningKeys extends Construct {
  /** Oldest first, as SIGNING_KEY_IDS lists them. */
  readonly keys: Key[];

  constructor(scope: Construct, id: string, props: TokenSigningKeysProps) {
    super(scope, id);
    const generations = props.generation > 1 ? [props.generation - 1, props.generation] : [props.generation];
    this.keys = generations.map((generation) =>
      this.signingKey(generation, signingKeySpec(generation, props.es256FromGeneration)),
    );
    if (props.backupRegion !== undefined) {
      // One role makes every replica, and is named in each replica's policy: KMS's lockout
      // safety check wants whoever creates a key able to put its next policy.
      const replicator = new Role(this, 'ReplicatorRole', {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        description: 'Replicates the token signing keys into the backup region, once at creation',
      });
      for (const [index, key] of this.keys.entries()) {
        this.replicate(key, generations[index] as number, props.backupRegion, replicator);
      }
    }
  }

  /** The newest key: the one a rotation moves to. */
  get newest(): Key {
    return this.keys.at(-1) as Key;
  }

  /** The key ids, oldest first, comma-separated (SIGNING_KEY_IDS, and the stack output for `npm run keys`). */
  get keyIds(): string {
    return this.keys.map((key) => key.keyId).join(',');
  }

  /** Names a principal in every key policy as allowed to sign; no IAM policy can add another. */
  allowSigning(principal: IPrincipal): void {
    for (const key of this.keys) {
      key.addToResourcePolicy(
        new PolicyStatement({
          sid: 'TokenFunctionSigns',
          principals: [principal],
          actions: ['kms:Sign'],
          resources: ['*'],
        }),
      );
    }
  }

  /** IAM permissions on every key (reading public keys; signing needs allowSigning too). */
  grant(grantee: IGrantable, ...actions: string[]): void {
    for (const key of this.keys) key.grant(grantee, ...actions);
  }

  private signingKey(generation: number, spec: ReturnType<typeof signingKeySpec>): Key {
    return new Key(this, `Generation${generation}`, {
      description: `Signs the access tokens of the credit transfer API (${spec.algorithm}), generation ${generation}`,
      keySpec: spec.keySpec,
      keyUsage: KeyUsage.SIGN_VERIFY,
      // Always: a key cannot become multi-Region later without being replaced, which would end
      // every token it signed. Costs nothing without a replica.
      multiRegion: true,
      removalPolicy: RemovalPolicy.RETAIN,
      // A policy of our own replaces CDK's default, which gives the account root kms:*: with it,
      // any IAM policy granting kms:Sign could mint tokens.
      policy: keyPolicy(this, SIGNING_KEY_USE),
    });
  }

  /**
   * A replica of the key in the backup region (KMS ReplicateKey, called once at creation),
   * administered as the primary and signing for no one until a stage deployed there is named in
   * its policy. Retained like the key. The replicating role may replicate into that region only.
   */
  private replicate(key: Key, generation: number, region: string, replicator: Role): void {
    const stack = Stack.of(this);
    /** Any key of the backup region: the replica's id is known only once KMS makes it. */
    const regionKeys = stack.formatArn({ service: 'kms', region, resource: 'key', resourceName: '*' });
    const replicaPolicy = {
      Version: '2012-10-17',
      Statement: [
        ...keyAdministration(this, SIGNING_KEY_USE),
        new PolicyStatement({
          sid: 'ReplicatorPutsReplicaPolicy',
          principals: [replicator],
          actions: ['kms:DescribeKey', 'kms:PutKeyPolicy'],
          resources: ['*'],
        }),
      ].map((statement) => statement.toStatementJson()),
    };
    const replica = new AwsCustomResource(this, `Generation${generation}Replica`, {
      onCreate: {
        service: 'KMS',
        action: 'replicateKey',
        parameters: {
          KeyId: key.keyArn,
          ReplicaRegion: region,
          Description: `Replica of the access token signing key of ${stack.stackName}, generation ${generation}`,
          Policy: stack.toJsonString(replicaPolicy),
        },
        physicalResourceId: PhysicalResourceId.fromResponse('ReplicaKeyMetadata.Arn'),
      },
      // Nothing on delete: the replica is retained, as the primary is.
      installLatestAwsSdk: false,
      role: replicator,
      policy: AwsCustomResourcePolicy.fromStatements([
        new PolicyStatement({ actions: ['kms:ReplicateKey'], resources: [key.keyArn] }),
        // A replica is a new key in that region; its id is not known before.
        new PolicyStatement({
          actions: ['kms:CreateKey'],
          resources: ['*'],
          conditions: { StringEquals: { 'aws:RequestedRegion': region } },
        }),
        new PolicyStatement({
          actions: ['kms:PutKeyPolicy'],
          resources: [regionKeys],
        }),
      ]),
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'ReplicatesToBackupRegion',
        principals: [replica.grantPrincipal],
        actions: ['kms:ReplicateKey'],
        resources: ['*'],
        conditions: { StringEquals: { 'kms:ReplicaRegion': region } },
      }),
    );
    const newKeyReason =
      'A replica is a new key whose id exists only once KMS makes it: CreateKey is limited to the backup region, PutKeyPolicy to keys of that region.';
    Validations.of(replica).acknowledge(
      { id: 'AwsSolutions-IAM5[Resource::*]', reason: newKeyReason },
      {
        id: `AwsSolutions-IAM5[Resource::${nagRendered(stack, regionKeys)}]`,
        reason: newKeyReason,
      },
    );
    acknowledgeCustomResourceProvider(stack);
  }
}
