import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

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
    });
  }
}
