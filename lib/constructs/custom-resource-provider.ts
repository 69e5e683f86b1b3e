import { type Stack, Validations } from 'aws-cdk-lib';

/** The singleton function behind every AwsCustomResource of a stack. */
const CUSTOM_RESOURCE_PROVIDER_ID = 'AWS679f53fac002430cb0da5b7982bd2287';

/** cdk-nag's finding on the provider's managed policy, acknowledged once the provider exists. */
export const acknowledgeCustomResourceProvider = (stack: Stack): void => {
  const provider = stack.node.tryFindChild(CUSTOM_RESOURCE_PROVIDER_ID);
  if (provider === undefined) return;
  Validations.of(provider).acknowledge({
    id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    reason:
      "CDK's AwsCustomResource provider logs with AWSLambdaBasicExecutionRole; it runs at deploy time only.",
  });
};
