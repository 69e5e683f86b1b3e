import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CreditTransferStack } from './credit-transfer-stack.ts';

export const STACK_NAME = 'CreditTransferService';

/**
 * The CDK app: one stack, checked by cdk-nag's AWS Solutions rules during synthesis.
 * An unacknowledged finding of level error fails `cdk synth`; every acknowledgement sits on the
 * construct it concerns and says why.
 *
 * Context: `stageName` (default `live`), `issuer` (default: the stage's execute-api URL),
 * `audience` (default `credit-transfers`).
 */
export const createApp = (props: AppProps = {}): { app: App; stack: CreditTransferStack } => {
  const app = new App(props);
  const stageName = contextString(app, 'stageName') ?? 'live';
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(stageName)) {
    throw new Error(`Context stageName must be letters, digits, - or _; got ${stageName}`);
  }

  const stack = new CreditTransferStack(app, STACK_NAME, {
    description: 'Credit transfer API: REST API, Lambda functions, DynamoDB table, KMS token signing key',
    stageName,
    issuer: contextString(app, 'issuer'),
    audience: contextString(app, 'audience') ?? 'credit-transfers',
  });

  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
};

const contextString = (app: App, key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`Context ${key} must be a string`);
  return value;
};
