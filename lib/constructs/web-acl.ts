import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnLoggingConfiguration, CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

export interface ApiWebAclProps {
  /** The ARN of the API Gateway stage the web ACL protects. */
  readonly stageArn: string;
  /** Names the web ACL, its log group and its rules' metrics; unique per account and region. */
  readonly name: string;
  /** Requests per source IP per five minutes, whole API. @default 3000 */
  readonly apiRateLimit?: number;
  /** Requests per source IP per five minutes to the token endpoint. @default 300 */
  readonly tokenRateLimit?: number;
  /** @default three months */
  readonly logRetention?: RetentionDays;
}

/** WAF's rate-based rules count requests per source IP over five minutes. */
export const WAF_WINDOW_SECONDS = 300;

/**
 * The per-IP limit of the whole API that lets one tenant calling from one address use all of its
 * usage plan's rate: a tenant's plan and WAF agree, and WAF blocks only what no plan allows.
 */
export const wafApiRateLimit = (tenantRatePerSecond: number): number =>
  tenantRatePerSecond * WAF_WINDOW_SECONDS;

/** The path suffix of the token endpoint, whatever base path (stage or mapping) precedes it. */
export const TOKEN_PATH = '/oauth/token';

/**
 * Rules of AWS's common rule set that would refuse valid API traffic: counted (seen in the
 * metrics and logs), never blocking. Each with the reason.
 */
export const COMMON_RULES_COUNTED: Readonly<Record<string, string>> = {
  SizeRestrictions_BODY:
    'Bodies up to 64 KiB are valid (MAX_BODY_BYTES in lambdas/shared/middleware.ts; a larger one is answered 413 with the problem body); the rule blocks past 8 KB.',
  CrossSiteScripting_BODY:
    'purpose and cancellationReason are free text up to 1025 characters and may hold markup; stored and returned as JSON strings, never rendered.',
  GenericLFI_BODY:
    'Free-text fields may hold a path such as ../ (an invoice reference); never used as a path.',
  GenericRFI_BODY: 'Free-text fields may hold a URL; never fetched.',
  NoUserAgent_HEADER:
    "Clients are machines (e.g. .NET's HttpClient sends no User-Agent); neither the API nor OAuth 2.0 asks for one.",
};

/**
 * What WAF logs: requests a rule blocked or counted (a counted managed rule's override is
 * EXCLUDED_AS_COUNT), not the allowed rest, which the API's access log already has one line for.
 * Logging every request cost a settled transfer more than WAF's inspection of it (docs/decisions.md).
 */
export const WAF_LOGGING_FILTER = {
  DefaultBehavior: 'DROP',
  Filters: [
    {
      Behavior: 'KEEP',
      Requirement: 'MEETS_ANY',
      Conditions: ['BLOCK', 'COUNT', 'EXCLUDED_AS_COUNT'].map((action) => ({
        ActionCondition: { Action: action },
      })),
    },
  ],
} as const;

/**
 * A regional WAF web ACL on the API stage: a per-IP rate limit for the whole API, a stricter one
 * for the token endpoint (the one public endpoint that checks secrets), and AWS's rules against
 * known bad inputs, bad addresses and common attacks. Blocked requests get the WAF_FILTERED
 * Gateway Response. Every request a rule blocked or counted is logged to an `aws-waf-logs-` log
 * group with the Authorization header (bearer tokens, client secrets) redacted; allowed requests
 * are not (WAF_LOGGING_FILTER).
 */
export class ApiWebAcl extends Construct {
  readonly webAcl: CfnWebACL;
  /** The web ACL's name: the WebACL dimension of its metrics. */
  readonly name: string;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ApiWebAclProps) {
    super(scope, id);
    this.name = props.name;
    const visibility = (name: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName: `${props.name}-${name}`,
    });
    const managed = (
      priority: number,
      name: string,
      counted: Readonly<Record<string, string>> = {},
    ): CfnWebACL.RuleProperty => ({
      name,
      priority,
      statement: {
        managedRuleGroupStatement: {
          vendorName: 'AWS',
          name,
          ...(Object.keys(counted).length > 0 && {
            ruleActionOverrides: Object.keys(counted).map((rule) => ({
              name: rule,
              actionToUse: { count: {} },
            })),
          }),
        },
      },
      overrideAction: { none: {} },
      visibilityConfig: visibility(name),
    });

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: props.name,
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
        managed(4, 'AWSManagedRulesCommonRuleSet', COMMON_RULES_COUNTED),
      ],
    });

    new CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stageArn,
      webAclArn: this.webAcl.attrArn,
    });

    // WAF delivers only to log groups named aws-waf-logs-*, given by an ARN without the `:*`.
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `aws-waf-logs-${props.name}`,
      retention: props.logRetention ?? RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    new CfnLoggingConfiguration(this, 'Logging', {
      resourceArn: this.webAcl.attrArn,
      logDestinationConfigs: [
        Stack.of(this).formatArn({
          service: 'logs',
          resource: 'log-group',
          resourceName: this.logGroup.logGroupName,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
      // Bearer tokens and Basic client credentials travel in it.
      redactedFields: [{ singleHeader: { Name: 'authorization' } }],
      loggingFilter: WAF_LOGGING_FILTER,
    });
  }
}
