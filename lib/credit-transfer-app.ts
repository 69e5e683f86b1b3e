import { App, type AppProps, Aspects, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { SdkEndpointSettings } from './constructs/function-defaults.ts';
import { CreditTransferStack } from './credit-transfer-stack.ts';
import { stageConfig } from './stage-config.ts';

/** One stack per stage, so stages live side by side in one account. */
export const stackNameOf = (stage: string): string => `CreditTransfers-${stage}`;

/**
 * The CDK app: the stack of one stage (context `stage`, default `dev`; every other setting in
 * lib/stage-config.ts), checked by cdk-nag's AWS Solutions rules during synthesis. An
 * unacknowledged finding fails `cdk synth`; every acknowledgement sits on the construct it
 * concerns and says why.
 */
export const createApp = (props: AppProps = {}): { app: App; stack: CreditTransferStack } => {
  const app = new App(props);
  const config = stageConfig((name) => app.node.tryGetContext(name));

  const stack = new CreditTransferStack(app, stackNameOf(config.stage), {
    description: `Credit transfer API, stage ${config.stage}: REST API, Lambda functions, DynamoDB table, lifecycle workflow, KMS token signing key`,
    config,
  });

  Aspects.of(stack).add(new SdkEndpointSettings(config.awsEndpoints));
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
};
