import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { SECRET_PURPOSE } from '#adapters/webhooks/secret-envelope';
import { keyPolicy } from './key-policy.ts';

/**
 * What every use of the key must name: its purpose, and the tenant and endpoint the secret
 * belongs to (kms:EncryptionContext:*), and nothing else (kms:EncryptionContextKeys).
 */
const ENCRYPTION_CONTEXT_CONDITIONS = {
  StringEquals: { 'kms:EncryptionContext:purpose': SECRET_PURPOSE },
  Null: { 'kms:EncryptionContext:tenant': 'false', 'kms:EncryptionContext:webhookEndpoint': 'false' },
  'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['purpose', 'tenant', 'webhookEndpoint'] },
};

/**
 * The KMS key the webhook signing secrets are sealed under (envelope encryption: a data key per
 * secret, lambdas/adapters/webhooks/secret-envelope.ts). Whoever makes data keys (creation,
 * rotation) and whoever opens them (the functions that sign deliveries) is named in the key
 * policy, beside the IAM grant: a role that can read an endpoint's item cannot sign with its secret.
 * Retained, and rotated yearly: without it no endpoint's deliveries can be signed.
 */
export class WebhookSecretKey extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Seals the webhook signing secrets of the credit transfer API (envelope encryption)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
      pendingWindow: Duration.days(30),
      policy: keyPolicy(this),
    });
  }

  /** Lets a function make data keys for new secrets, for one endpoint's context at a time. */
  allowSealing(grantee: IGrantable): void {
    this.allow(grantee, 'WebhookSecretSealer', ['kms:GenerateDataKey']);
  }

  /** Lets a function open sealed secrets (to sign deliveries). */
  allowOpening(grantee: IGrantable): void {
    this.allow(grantee, 'WebhookSecretOpener', ['kms:Decrypt']);
  }

  private allow(grantee: IGrantable, sid: string, actions: string[]): void {
    const statement = {
      actions,
      resources: [this.key.keyArn],
      conditions: ENCRYPTION_CONTEXT_CONDITIONS,
    };
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement(statement));
    this.key.addToResourcePolicy(
      new PolicyStatement({ ...statement, sid, principals: [grantee.grantPrincipal], resources: ['*'] }),
    );
  }
}
