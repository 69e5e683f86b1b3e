import { writeFileSync } from 'node:fs';
import { it } from 'vitest';
import { synthesize } from './synth.ts';

it('synth', () => {
  const s = synthesize({
    stage: 'prod',
    account: '123456789012',
    region: 'eu-west-1',
    keyAdminRoleArn: 'arn:aws:iam::123456789012:role/payments-key-admin',
    connectorUrl: 'https://connector.clearing.example',
    alarmEmail: 'a@b.example',
    domainName: 'payments.bank.example',
    certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c',
    connectorSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:connector-hmac-AbCdEf',
    connectorSecretKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
  });
  writeFileSync(
    '/tmp/ops/prod.json',
    JSON.stringify({ t: s.template.toJSON(), nag: s.nagFindings, guard: s.guardFindings }),
  );
}, 3_000_000);
