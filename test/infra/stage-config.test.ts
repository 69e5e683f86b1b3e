import { describe, expect, it } from 'vitest';
import { stageConfig } from '../../lib/stage-config.ts';

const configOf = (context: Record<string, string>) => stageConfig((name) => context[name]);
/** What every prod stage names (its account, its key administrator): findings.test.ts shows the refusals. */
const PROD_PINNED = {
  account: '123456789012',
  keyAdminRoleArn: 'arn:aws:iam::123456789012:role/payments-key-admin',
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
});
