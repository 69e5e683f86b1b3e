import { describe, expect, it } from 'vitest';
import { createApp } from '../../lib/credit-transfer-app.ts';
import { stageConfig } from '../../lib/stage-config.ts';
import { CDK_JSON_CONTEXT } from './synth.ts';

const configOf = (context: Record<string, string>) => stageConfig((name) => context[name]);
/** What every prod stage names (its account and region, its key administrator, its domain or none): findings.test.ts shows the refusals. */
const PROD_PINNED = {
  account: '123456789012',
  keyAdminRoleArn: 'arn:aws:iam::123456789012:role/payments-key-admin',
  region: 'eu-west-1',
  noCustomDomain: 'true',
};

describe('stage settings from context', () => {
  it('defaults to dev on the sandbox, no WAF, AWS managed table key, no account-wide role', () => {
    const config = configOf({});
    expect(config).toMatchObject({
      stage: 'dev',
      rail: { kind: 'sandbox' },
      waf: false,
      tableCustomerManagedKey: false,
      apiGatewayCloudWatchRole: false,
      audience: 'credit-transfers',
    });
    expect(config.alarmEmail).toBeUndefined();
  });

  it('turns WAF on for prod, and lets any stage switch it', () => {
    const pager = { alarmEmail: 'oncall@bank.example', ...PROD_PINNED };
    expect(configOf({ stage: 'prod', sandbox: 'true', ...pager }).waf).toBe(true);
    expect(configOf({ stage: 'prod', sandbox: 'true', waf: 'false', ...pager }).waf).toBe(false);
    expect(configOf({ stage: 'test', waf: 'true' }).waf).toBe(true);
  });

  it('samples traces and logs only workflow failures on prod, everything elsewhere, and refuses what it cannot use', () => {
    const pager = { alarmEmail: 'oncall@bank.example', ...PROD_PINNED };
    expect(configOf({ stage: 'prod', sandbox: 'true', ...pager })).toMatchObject({
      xraySamplingRate: 0.05,
      workflowLogLevel: 'ERROR',
    });
    expect(configOf({})).toMatchObject({ xraySamplingRate: 1, workflowLogLevel: 'ALL' });
    expect(configOf({ xraySamplingRate: '0.2', workflowLogLevel: 'OFF' })).toMatchObject({
      xraySamplingRate: 0.2,
      workflowLogLevel: 'OFF',
    });
    expect(() => configOf({ xraySamplingRate: '5' })).toThrow(/xraySamplingRate must be a share from 0 to 1/);
    expect(() => configOf({ xraySamplingRate: 'half' })).toThrow(/xraySamplingRate/);
    expect(() => configOf({ workflowLogLevel: 'DEBUG' })).toThrow(
      /workflowLogLevel must be one of ALL, ERROR/,
    );
  });

  it('runs the connector where a URL is given, and refuses prod with neither connector nor sandbox', () => {
    expect(configOf({ connectorUrl: 'https://c.example' }).rail).toEqual({
      kind: 'connector',
      url: 'https://c.example',
    });
    expect(() => configOf({ stage: 'prod' })).toThrow(/connectorUrl=https:\/\/.*sandbox=true/);
    expect(() => configOf({ connectorUrl: 'http://c.example' })).toThrow(/https/);
    expect(() => configOf({ sandbox: 'true', connectorUrl: 'https://c.example' })).toThrow(/one rail/);
  });

  it('keeps the issuer whatever happens to the API: the domain, else a name of the stage, else what is asked', () => {
    const plain = new URL(configOf({ stage: 'uat' }).issuer);
    expect(plain.protocol).toBe('https:');
    expect(plain.hostname).toContain('uat');
    expect(plain.pathname).toBe('/');
    expect(
      configOf({
        domainName: 'pay.bank.example',
        certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/x',
      }).issuer,
    ).toBe('https://pay.bank.example');
    expect(configOf({ issuer: 'https://auth.bank.example' }).issuer).toBe('https://auth.bank.example');
    expect(() => configOf({ issuer: 'https://abc123.execute-api.eu-west-1.amazonaws.com/dev' })).toThrow(
      /API id/,
    );
  });

  it('refuses settings that cannot work, each in one line', () => {
    const refused: Record<string, string>[] = [
      { stage: 'Prod!' },
      { domainName: 'pay.bank.example' },
      { waf: 'yes' },
      { logRetentionDays: '100' },
      { signingKeyGeneration: '0' },
      { alarmEmail: 'nobody' },
      { connectorUrl: 'https://c.example', connectorSecretArn: 'not-an-arn' },
      { stage: 'prod', sandbox: 'true' },
      { alarmTopicArn: 'payments-paging' },
      { backupRegion: 'Frankfurt' },
      { backupCopyVaultArn: 'arn:aws:s3:::bucket' },
      { backupVaultLock: 'yes' },
      { backupRetentionDays: '0' },
      { reservedConcurrencyApi: '0' },
      { mtlsTruststoreUri: 's3://bank-truststores/clients.pem' },
      {
        domainName: 'pay.bank.example',
        certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/x',
        mtlsTruststoreUri: 'https://bank.example/clients.pem',
      },
    ];
    for (const context of refused) {
      expect(() => configOf(context), JSON.stringify(context)).toThrow(/^[^\n]+$/);
    }
  });

  it('pages someone on prod: an address or an existing topic', () => {
    expect(() => configOf({ stage: 'prod', sandbox: 'true' })).toThrow(/alarmEmail=.*alarmTopicArn=/);
    const topic = 'arn:aws:sns:eu-west-1:123456789012:payments-paging';
    expect(
      configOf({ stage: 'prod', sandbox: 'true', alarmTopicArn: topic, ...PROD_PINNED }).alarmTopicArn,
    ).toBe(topic);
  });

  it("sets each tenant's default limit: 25 per second, bursts of 50; a rate alone bursts twice that", () => {
    expect(configOf({}).tenantRateLimit).toEqual({ ratePerSecond: 25, burst: 50 });
    expect(configOf({ tenantRateLimit: '10' }).tenantRateLimit).toEqual({ ratePerSecond: 10, burst: 20 });
    expect(configOf({ tenantRateLimit: '10', tenantBurstLimit: '15' }).tenantRateLimit).toEqual({
      ratePerSecond: 10,
      burst: 15,
    });
    expect(() => configOf({ tenantRateLimit: '0' })).toThrow(/tenantRateLimit/);
    expect(() => configOf({ tenantBurstLimit: '5001' })).toThrow(/tenantBurstLimit/);
  });

  it('pins prod to its region and its custom domain, each refusal one line naming the setting', () => {
    const prod = { stage: 'prod', sandbox: 'true', alarmEmail: 'oncall@bank.example', ...PROD_PINNED };
    expect(configOf(prod)).toMatchObject({
      region: 'eu-west-1',
      issuer: 'https://credit-transfers-prod.invalid',
    });
    expect(() => configOf({ ...prod, region: '' })).toThrow(/^Stage prod needs -c region=[^\n]*$/);
    expect(() => configOf({ ...prod, region: 'Ireland' })).toThrow(/region must be an AWS region/);
    expect(() => configOf({ ...prod, backupRegion: 'eu-west-1' })).toThrow(/another region/);
    // No domain is refused unless the stage says, by name, that it has none.
    expect(() => configOf({ ...prod, noCustomDomain: '' })).toThrow(
      /^Stage prod needs -c domainName=.*-c noCustomDomain=true[^\n]*$/,
    );
    const domain = {
      domainName: 'payments.bank.example',
      certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/x',
    };
    expect(configOf({ ...prod, noCustomDomain: '', ...domain }).issuer).toBe('https://payments.bank.example');
    expect(() => configOf({ ...prod, ...domain })).toThrow(/exclude each other/);
    // Other stages need neither.
    expect(configOf({}).region).toBeUndefined();
  });

  it("names the connector secret's customer managed key only beside the secret it encrypts", () => {
    const secretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:connector-hmac-AbCdEf';
    const keyArn = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    const connector = { connectorUrl: 'https://c.example', connectorSecretArn: secretArn };
    expect(configOf({ ...connector, connectorSecretKeyArn: keyArn }).rail).toEqual({
      kind: 'connector',
      url: 'https://c.example',
      secretArn,
      secretKeyArn: keyArn,
    });
    expect(() => configOf({ connectorUrl: 'https://c.example', connectorSecretKeyArn: keyArn })).toThrow(
      /connectorSecretKeyArn needs connectorSecretArn/,
    );
    expect(() => configOf({ ...connector, connectorSecretKeyArn: 'alias/connector' })).toThrow(/KMS key ARN/);
  });

  it("refuses credentials of another region than prod's, in one line", () => {
    const previous = process.env.CDK_DEFAULT_REGION;
    try {
      process.env.CDK_DEFAULT_REGION = 'us-east-1';
      const context = { stage: 'prod', sandbox: 'true', alarmEmail: 'oncall@bank.example', ...PROD_PINNED };
      expect(() => createApp({ context: { ...CDK_JSON_CONTEXT, ...context } })).toThrow(
        /^Stage prod is pinned to region eu-west-1 \(-c region\), but the credentials' region is us-east-1$/,
      );
    } finally {
      if (previous === undefined) delete process.env.CDK_DEFAULT_REGION;
      else process.env.CDK_DEFAULT_REGION = previous;
    }
  });
});
