import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import type { IPolicyValidationContextBeta1, PolicyValidationPluginReportBeta1 } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { ControlTowerRules, rulesForAbsentTypes, withResourcesOf } from '../../lib/credit-transfer-app.ts';

/**
 * The Control Tower rules left out of a synthesis are those that cannot find anything in it:
 * every resource type they name is absent from the templates.
 */
describe('Control Tower rules for absent resource types', () => {
  it('leaves out every rule when no resource type is present, each rule naming a type', () => {
    const all = rulesForAbsentTypes(new Set());
    expect(all.length).toBeGreaterThan(200);
    expect(all).toContain('ct-lambda-pr-2');
  });

  it('keeps every rule naming a present type, and only those', () => {
    const all = rulesForAbsentTypes(new Set());
    const absent = rulesForAbsentTypes(new Set(['AWS::Lambda::Function', 'AWS::DynamoDB::Table']));
    const kept = all.filter((rule) => !absent.includes(rule));
    expect(kept).toContain('ct-lambda-pr-3');
    expect(absent).toContain('ct-lambda-pr-2');
    expect(kept.some((rule) => rule.startsWith('ct-dynamodb-'))).toBe(true);
    expect(kept.some((rule) => rule.startsWith('ct-rds-'))).toBe(false);
    expect(absent.some((rule) => rule.startsWith('ct-rds-'))).toBe(true);
  });
});

/**
 * Each group of rules is shown only the resources of the types it names, and those they reference:
 * the findings must be the ones cfn-guard gives on the whole template.
 */
describe('Control Tower rules on the resources they name', () => {
  const template = {
    AWSTemplateFormatVersion: '2010-09-09',
    Resources: {
      Role: { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: {} } },
      Fn: {
        Type: 'AWS::Lambda::Function',
        Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] }, Runtime: 'nodejs24.x' },
      },
      // Public: no SourceAccount or SourceArn (CT.LAMBDA.PR.2), its function referenced.
      OpenPermission: {
        Type: 'AWS::Lambda::Permission',
        Properties: { Action: 'lambda:InvokeFunction', FunctionName: { Ref: 'Fn' }, Principal: '*' },
      },
      // As the API's permissions are: a service principal, the function by GetAtt, no SourceAccount.
      ApiPermission: {
        Type: 'AWS::Lambda::Permission',
        Properties: {
          Action: 'lambda:InvokeFunction',
          FunctionName: { 'Fn::GetAtt': ['Fn', 'Arn'] },
          Principal: 'apigateway.amazonaws.com',
          SourceArn: { 'Fn::Join': ['', ['arn:aws:execute-api:', { Ref: 'AWS::Region' }, ':api/POST/x']] },
        },
      },
      // A dead-letter queue by reference (CT.SQS.PR.1 resolves it), and a queue without one.
      DeadLetters: { Type: 'AWS::SQS::Queue', Properties: {} },
      Redriven: {
        Type: 'AWS::SQS::Queue',
        Properties: { RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': ['DeadLetters', 'Arn'] } } },
      },
      Subbed: {
        Type: 'AWS::Logs::LogGroup',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's own substitution
        Properties: { LogGroupName: { 'Fn::Sub': '/aws/lambda/${Fn}' } },
        DependsOn: ['Redriven'],
      },
    },
  };

  it('keeps the resources of the named types, those they reference by Ref, GetAtt, Sub or DependsOn, and every other section', () => {
    const kept = withResourcesOf(template, new Set(['AWS::Lambda::Permission']));
    expect(Object.keys(kept.Resources ?? {}).sort()).toEqual([
      'ApiPermission',
      'Fn',
      'OpenPermission',
      'Role',
    ]);
    expect(kept.AWSTemplateFormatVersion).toBe('2010-09-09');
    const logs = withResourcesOf(template, new Set(['AWS::Logs::LogGroup']));
    expect(Object.keys(logs.Resources ?? {}).sort()).toEqual([
      'DeadLetters',
      'Fn',
      'Redriven',
      'Role',
      'Subbed',
    ]);
    expect(withResourcesOf(template, undefined)).toBe(template);
  });

  it('finds what cfn-guard finds on the whole template, in the same template', () => {
    const folder = mkdtempSync(join(tmpdir(), 'control-tower-test-'));
    try {
      const path = join(folder, 'Stack.template.json');
      writeFileSync(path, JSON.stringify(template, undefined, 1));
      const present = new Set(Object.values(template.Resources).map((resource) => resource.Type));
      const context = { templatePaths: [path] } as unknown as IPolicyValidationContextBeta1;
      const findings = (report: PolicyValidationPluginReportBeta1) =>
        report.violations
          .flatMap((v) =>
            v.violatingResources.map((r) => `${v.ruleName} ${r.resourceLogicalId} ${r.templatePath}`),
          )
          .sort();
      const whole = new CfnGuardValidator({ disabledRules: rulesForAbsentTypes(present) }).validate(context);
      const split = new ControlTowerRules().validate(context);
      expect(findings(split)).toEqual(findings(whole));
      const rules = findings(split).map((finding) => finding.split(' ').slice(0, 2).join(' '));
      expect(rules).toContain('lambda_function_public_access_prohibited_check OpenPermission');
      expect(rules).toContain('sqs_dlq_check DeadLetters');
      expect(rules).not.toContain('sqs_dlq_check Redriven');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
