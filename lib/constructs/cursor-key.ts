import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { type IPrincipal, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { keyPolicy } from './key-policy.ts';

/**
 * The KMS HMAC key behind the list cursors' signing secret: the list function derives the secret
 * from it once per container (GenerateMac of a fixed label), so the root key never leaves KMS.
 * Removed with the stack: only cursors in flight depend on it.
 */
export class ListCursorKey extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Signs the list cursors of the credit transfer API (HMAC-SHA256)',
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
      // Whoever derives the secret is named in the key policy (allowMac); no IAM policy can add one.
      policy: keyPolicy(this, { deletedWithStack: true }),
    });
  }

  /** Names a principal in the key policy as allowed to derive the cursor secret. */
  allowMac(principal: IPrincipal): void {
    this.key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'ListFunctionDerivesCursorSecret',
        principals: [principal],
        actions: ['kms:GenerateMac'],
        resources: ['*'],
      }),
    );
  }
}
