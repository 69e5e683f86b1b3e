import { RemovalPolicy } from 'aws-cdk-lib';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

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
    });
  }
}
