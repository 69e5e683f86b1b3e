import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

export interface ApiWebAclProps {
  /** The ARN of the API Gateway stage the web ACL protects. */
  readonly stageArn: string;
  /** Names the metrics of the web ACL's rules. */
  readonly metricPrefix: string;
  /** Requests per source IP per five minutes, whole API. @default 3000 */
  readonly apiRateLimit?: number;
  /** Requests per source IP per five minutes to the token endpoint. @default 300 */
  readonly tokenRateLimit?: number;
}

/** The path suffix of the token endpoint, whatever base path (stage or mapping) precedes it. */
export const TOKEN_PATH = '/oauth/token';

/**
 * A regional WAF web ACL on the API stage: a per-IP rate limit for the whole API, a stricter one
 * for the token endpoint (the one public endpoint that checks secrets), and AWS's rules against
 * known bad inputs and addresses. Blocked requests get the WAF_FILTERED Gateway Response.
 */
export class ApiWebAcl extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: ApiWebAclProps) {
    super(scope, id);
    const visibility = (name: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName: `${props.metricPrefix}-${name}`,
    });
    const managed = (priority: number, name: string): CfnWebACL.RuleProperty => ({
      name,
      priority,
      statement: { managedRuleGroupStatement: { vendorName: 'AWS', name } },
      overrideAction: { none: {} },
      visibilityConfig: visibility(name),
    });

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: 'Rate limits and managed rules in front of the credit transfer API',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('all'),
      rules: [
        {
          name: 'token-endpoint-rate',
          priority: 0,
          action: { block: {} },
          statement: {
            rateBasedStatement: {
              limit: props.tokenRateLimit ?? 300,
              aggregateKeyType: 'IP',
              scopeDownStatement: {
                byteMatchStatement: {
                  fieldToMatch: { uriPath: {} },
                  positionalConstraint: 'ENDS_WITH',
                  searchString: TOKEN_PATH,
                  textTransformations: [{ priority: 0, type: 'LOWERCASE' }],
                },
              },
            },
          },
          visibilityConfig: visibility('token-endpoint-rate'),
        },
        {
          name: 'api-rate',
          priority: 1,
          action: { block: {} },
          statement: { rateBasedStatement: { limit: props.apiRateLimit ?? 3000, aggregateKeyType: 'IP' } },
          visibilityConfig: visibility('api-rate'),
        },
        managed(2, 'AWSManagedRulesAmazonIpReputationList'),
        managed(3, 'AWSManagedRulesKnownBadInputsRuleSet'),
      ],
    });

    new CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
