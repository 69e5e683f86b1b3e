import { CfnSamplingRule } from 'aws-cdk-lib/aws-xray';
import { Construct } from 'constructs';

export interface TraceSamplingProps {
  /** Short and unique per stage: a rule's name has at most 32 characters. */
  readonly stage: string;
  /** The API stage's ARN (API Gateway starts the trace of each request). */
  readonly apiStageArn: string;
  /** The state machine's ARN (Step Functions starts the trace of each execution; its tasks join it). */
  readonly stateMachineArn: string;
  /** Share of requests and executions traced, 0 to 1. */
  readonly fixedRate: number;
}

/**
 * X-Ray sampling rules for the stage's two trace roots, in place of X-Ray's default rule (the
 * first request each second and 5 % beyond, which at a payment API's modest rate records nearly
 * every request). No reservoir: the rate alone decides, so the cost of traces is a fixed share of
 * the traffic. A downstream function follows the decision its caller made.
 */
export class TraceSampling extends Construct {
  readonly rules: CfnSamplingRule[];

  constructor(scope: Construct, id: string, props: TraceSamplingProps) {
    super(scope, id);
    const rule = (name: string, resourceArn: string, priority: number) =>
      new CfnSamplingRule(this, name, {
        samplingRule: {
          ruleName: `ct-${props.stage}-${name.toLowerCase()}`,
          priority,
          fixedRate: props.fixedRate,
          reservoirSize: 0,
          resourceArn,
          serviceName: '*',
          serviceType: '*',
          host: '*',
          httpMethod: '*',
          urlPath: '*',
          version: 1,
        },
      });
    this.rules = [rule('Api', props.apiStageArn, 100), rule('Workflow', props.stateMachineArn, 101)];
  }
}
