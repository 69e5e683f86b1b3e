import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scriptArguments } from '#local/service-process';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually } from './support/webhook-receiver.ts';

/**
 * The local runtime checks every AWS SDK call of a function against that function's IAM policies,
 * as the synthesized stack gives them. With one grant removed (LOCAL_IAM_WITHOUT) the route that
 * needs it fails as it would on AWS: the SDK raises AccessDeniedException, the handler answers 500.
 */
const STATUS_PATH = '/v1/payments/credit-transfers/no-such-payment/status';
const TRANSFERS = '/v1/payments/credit-transfers';

/** The service's output once it shows `pattern` (a denial logged by a function that runs in the background). */
const outputShowing = (output: () => string, pattern: RegExp) =>
  eventually(() => (pattern.test(output()) ? output() : undefined), `output matching ${pattern}`);

/** The final statuses a transfer settles in. */
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);

/** `npm run iam:report -- --stage <stage>` over the decisions in `directory`. */
const iamReport = (stage: string, directory: string): string => {
  const run = spawnSync(
    process.execPath,
    [...scriptArguments('scripts/iam-report.ts', { fromSources: true }), '--stage', stage],
    { env: { ...process.env, LOCAL_IAM_DECISIONS_DIR: directory }, encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
  return run.stdout;
};

/*
 * The local runtime enforces the stage it is told (LOCAL_IAM_STAGE, `prod` by default): a transfer
 * settles under each stage's policies, every call of the run (the functions', the state machines',
 * API Gateway's, EventBridge's, the schedules') allowed, as the IAM report of that stage says.
 */
describe.each(['dev', 'prod'])('under the %s stage policies', (stage) => {
  const decisions = mkdtempSync(join(tmpdir(), `iam-decisions-${stage}-`));
  const service = useLocalService({
    token: true,
    env: { LOCAL_IAM_STAGE: stage, LOCAL_IAM_DECISIONS_DIR: decisions },
  });
  afterAll(() => rm(decisions, { recursive: true, force: true }));

  it('settles a transfer with no call denied, the report of that stage saying so', async () => {
    const accepted = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      body: minimalCreditTransfer(),
    });
    expect(accepted.status).toBe(202);
    const paymentId = String(accepted.body?.paymentId);
    await eventually(async () => {
      const reply = await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, {
        token: service.token,
      });
      return FINAL.has(reply.body?.status) ? reply : undefined;
    }, `${paymentId} final`);
    expect(service.output()).not.toMatch(/AccessDeniedException/);
    const recorded = readdirSync(decisions).flatMap((file) =>
      readFileSync(join(decisions, file), 'utf8').split('\n').filter(Boolean),
    );
    // Decisions of the stage asked for, the services' calls among them.
    expect(recorded.length).toBeGreaterThan(0);
    for (const line of recorded) expect(JSON.parse(line)).toMatchObject({ stage, allowed: true });
    expect(recorded.join('\n')).toMatch(/"function":"apigateway\.amazonaws\.com"/);
    expect(recorded.join('\n')).toMatch(/"function":"LifecycleFastPath","action":"lambda:InvokeFunction"/);
    const report = iamReport(stage, decisions);
    expect(report).toMatch(new RegExp(`, [1-9]\\d* under the current ${stage} policies with every grant`));
    expect(report).toMatch(/\n0 distinct call\(s\) denied with every grant in place/);
    // The other stage's report counts none of them: its policies are not these.
    const other = stage === 'dev' ? 'prod' : 'dev';
    expect(iamReport(other, decisions)).toMatch(new RegExp(`, 0 under the current ${other} policies`));
  });
});

describe('with every grant of the stack', () => {
  const service = useLocalService({ token: 'transactions:read' });

  it('answers an authenticated call: the authorizer may read the client it checks', async () => {
    const reply = await callApi(service.baseUrl, STATUS_PATH, { token: service.token });
    expect(reply.status).toBe(404);
    expect(service.output()).not.toMatch(/AccessDeniedException/);
  });
});

describe('without the authorizer grant on client records (its binding before issue 29)', () => {
  const service = useLocalService({ env: { LOCAL_IAM_WITHOUT: 'Authorizer=dynamodb:GetItem@CLIENT#' } });

  it('answers every authenticated call with 500, the authorizer denied its read of the client', async () => {
    // The token endpoint's own function may read clients: tokens are still issued.
    const token = await requestToken(service.baseUrl, 'transactions:read');
    const reply = await callApi(service.baseUrl, STATUS_PATH, { token });
    expect(reply.status).toBe(500);
    expect(service.output()).toMatch(
      /AccessDeniedException[\s\S]*assumed-role\/\S+\/Authorizer is not authorized to perform: dynamodb:GetItem/,
    );
  });
});

describe("without the status route's GetItem", () => {
  const service = useLocalService({
    token: 'transactions:read',
    env: { LOCAL_IAM_WITHOUT: 'GetCreditTransferStatus=dynamodb:GetItem' },
  });

  it('answers the status route with 500, from the AccessDeniedException AWS would raise', async () => {
    const reply = await callApi(service.baseUrl, STATUS_PATH, { token: service.token });
    expect(reply.status).toBe(500);
    expect(service.output()).toMatch(
      /AccessDeniedException[\s\S]*GetCreditTransferStatus is not authorized to perform: dynamodb:GetItem on resource: arn:aws:dynamodb:local:000000000000:table\//,
    );
  });
});

/*
 * The stand-ins for KMS, EventBridge, Step Functions and SQS (key files, the events file, the local
 * workflow runner, the delivery worker) are checked alike: each call against the calling function's
 * role and the resource policy involved, failing with that service's AccessDeniedException.
 */
describe('without the webhook secret key for the endpoint route, nor the lifecycle start for the initiation route', () => {
  const service = useLocalService({
    token: true,
    env: {
      LOCAL_IAM_WITHOUT:
        'CreateWebhookEndpoint=kms:GenerateDataKey,InitiateCreditTransfer=states:StartExecution',
    },
  });

  it('answers the endpoint creation with 500: KMS refused the data key its secret is sealed under', async () => {
    const reply = await callApi(service.baseUrl, '/v1/webhook-endpoints', {
      token: service.token,
      // A receiver on this machine: the local runtime allows one (nothing listens; none is called).
      body: { url: 'http://127.0.0.1:9/hooks' },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(500);
    expect(service.output()).toMatch(
      /AccessDeniedException[\s\S]*CreateWebhookEndpoint is not authorized to perform: kms:GenerateDataKey on resource: arn:aws:kms:local:000000000000:key\/WebhookSecretKey/,
    );
  });

  it('accepts the transfer, the lifecycle start refused by Step Functions and left to the reconciler', async () => {
    const reply = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      body: minimalCreditTransfer(),
    });
    expect(reply.status).toBe(202);
    const output = await outputShowing(
      service.output,
      /InitiateCreditTransfer is not authorized to perform: states:StartExecution/,
    );
    expect(output).toMatch(
      /Lifecycle workflow not started; the reconciler will start it[\s\S]*AccessDeniedException[\s\S]*states:StartExecution on resource: arn:aws:states:local:000000000000:stateMachine:/,
    );
  });
});

describe("without the status publisher's PutEvents", () => {
  const service = useLocalService({
    token: true,
    env: { LOCAL_IAM_WITHOUT: 'PublishStatusEvents=events:PutEvents' },
  });

  it('publishes no status event: EventBridge refuses the publishing step, which is retried', async () => {
    const reply = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      body: minimalCreditTransfer(),
    });
    expect(reply.status).toBe(202);
    await outputShowing(
      service.output,
      /AccessDeniedException[\s\S]*PublishStatusEvents is not authorized to perform: events:PutEvents on resource: arn:aws:events:local:000000000000:event-bus\//,
    );
    const events = await callApi(service.baseUrl, '/v1/events', { token: service.token });
    expect(events.status).toBe(200);
    expect(events.body).toEqual([]);
  });
});

describe("without the ingest function's receive on its queue", () => {
  const service = useLocalService({
    token: true,
    env: { LOCAL_IAM_WITHOUT: 'WebhookIngest=sqs:ReceiveMessage' },
  });

  it('records no status event: Lambda cannot read the queue the bus feeds', async () => {
    const reply = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      body: minimalCreditTransfer(),
    });
    expect(reply.status).toBe(202);
    await outputShowing(
      service.output,
      /AccessDeniedException[\s\S]*WebhookIngest is not authorized to perform: sqs:ReceiveMessage on resource: arn:aws:sqs:local:000000000000:WebhooksQueue/,
    );
    const events = await callApi(service.baseUrl, '/v1/events', { token: service.token });
    expect(events.body).toEqual([]);
  });
});

describe("without the batch route's invocation of the batch lifecycle starter", () => {
  const service = useLocalService({
    token: 'transactions:read transactions:write',
    env: { LOCAL_IAM_WITHOUT: 'SubmitCreditTransferBatch=lambda:InvokeFunction' },
  });

  it('accepts the batch, the starter refused by Lambda and its lifecycles left to the reconciler', async () => {
    const xml = (await readFile('examples/pain.001.001.09.xml', 'utf8'))
      .replaceAll('2026-12-01', new Date().toISOString().slice(0, 10))
      .replace(/<MsgId>[^<]*<\/MsgId>/, '<MsgId>IAM-LAMBDA-1</MsgId>');
    const reply = await callApi(service.baseUrl, '/v1/payments/credit-transfer-batches', {
      token: service.token,
      rawBody: xml,
      headers: { 'Content-Type': 'application/xml' },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    const output = await outputShowing(
      service.output,
      /SubmitCreditTransferBatch is not authorized to perform: lambda:InvokeFunction/,
    );
    expect(output).toMatch(
      /A batch's lifecycles were not started; the reconciler will start them[\s\S]*AccessDeniedException[\s\S]*lambda:InvokeFunction on resource: arn:aws:lambda:local:000000000000:function:/,
    );
  });
});

/*
 * The services' own calls: a state machine's role invoking a task, API Gateway invoking a function
 * by the function's resource policy. Without the grant, the path fails as it would on AWS.
 */
describe("without the fast path's lambda:InvokeFunction (its state machine role)", () => {
  const decisions = mkdtempSync(join(tmpdir(), 'iam-decisions-fast-path-'));
  const service = useLocalService({
    token: true,
    env: { LOCAL_IAM_WITHOUT: 'LifecycleFastPath=lambda:InvokeFunction', LOCAL_IAM_DECISIONS_DIR: decisions },
  });
  afterAll(() => rm(decisions, { recursive: true, force: true }));
  const recorded = () =>
    readdirSync(decisions)
      .flatMap((file) => readFileSync(join(decisions, file), 'utf8').split('\n').filter(Boolean))
      .map(
        (line) =>
          JSON.parse(line) as { function: string; action: string; resource: string; allowed: boolean },
      );

  it('accepts the transfer, whose first task Step Functions may not invoke: it never runs, the transfer never settles', async () => {
    const reply = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      body: minimalCreditTransfer(),
    });
    expect(reply.status).toBe(202);
    // The Task fails (Lambda.AWSLambdaException) and is retried, as on AWS, for minutes.
    const refusal = await eventually(
      () =>
        recorded().find(
          (d) => d.function === 'LifecycleFastPath' && d.action === 'lambda:InvokeFunction' && !d.allowed,
        ),
      'the fast path refused its first task',
    );
    expect(refusal.resource).toMatch(
      /^arn:aws:lambda:local:000000000000:function:LifecycleValidateCheckAndSubmitFunction/,
    );
    expect(recorded().filter((d) => d.function === 'ValidateCheckAndSubmit')).toEqual([]);
    const status = await callApi(service.baseUrl, `${TRANSFERS}/${String(reply.body?.paymentId)}/status`, {
      token: service.token,
    });
    expect(FINAL.has(status.body?.status), JSON.stringify(status.body)).toBe(false);
  });
});

describe("without the status route's permission for API Gateway (its function's resource policy)", () => {
  const service = useLocalService({
    token: 'transactions:read',
    env: { LOCAL_IAM_WITHOUT: 'apigateway.amazonaws.com=lambda:InvokeFunction@GetCreditTransferStatus' },
  });

  it('answers the status route with 500, the function never invoked; other routes answer', async () => {
    const reply = await callApi(service.baseUrl, STATUS_PATH, { token: service.token });
    expect(reply.status).toBe(500);
    expect(service.output()).toMatch(
      /apigateway\.amazonaws\.com is not authorized to perform: lambda:InvokeFunction on resource: \S+ApiGetCreditTransferStatusFunction/,
    );
    const list = await callApi(service.baseUrl, TRANSFERS, { token: service.token });
    expect(list.status).toBe(200);
  });
});

describe("without the authorizer's permission for API Gateway", () => {
  const service = useLocalService({
    env: { LOCAL_IAM_WITHOUT: 'apigateway.amazonaws.com=lambda:InvokeFunction@Authorizer' },
  });

  it('answers every authenticated call with 500, the authorizer never invoked', async () => {
    const token = await requestToken(service.baseUrl, 'transactions:read');
    const reply = await callApi(service.baseUrl, STATUS_PATH, { token });
    expect(reply.status).toBe(500);
    expect(service.output()).toMatch(
      /is not authorized to perform: lambda:InvokeFunction on resource: \S+ApiAuthorizerFunction/,
    );
  });
});
