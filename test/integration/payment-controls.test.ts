import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const CONTROLS = '/v1/payment-controls';

const service = useLocalService();

const DOCUMENT = {
  approvalRules: [
    { name: 'large EUR payments', currency: 'EUR', minimumAmount: '10000.00', approvalsRequired: 2 },
    { name: 'new creditors', newCreditorOnly: true, approvalsRequired: 1 },
  ],
  approvalExpiry: 'P7D',
  limits: [
    {
      debtorAccountId: 'DE89370400440532013000',
      currency: 'EUR',
      period: 'day',
      maxAmount: '50000.00',
      maxCount: 100,
      onBreach: 'reject',
    },
    { currency: 'EUR', period: 'transaction', maxAmount: '250000.00', onBreach: 'approval' },
  ],
};

/** A token of a new client of a new tenant (or of `tenant`), with `scope`. */
const clientOf = async (
  scope = 'payment-controls:manage',
  tenant = `controls-${randomUUID().slice(0, 8)}`,
) => {
  const clientId = `controls-${randomUUID()}`;
  const clientSecret = `${clientId}-secret`;
  await createClient(service, { clientId, clientSecret, scope, tenant });
  return {
    clientId,
    tenant,
    token: await requestToken(service.baseUrl, undefined, { clientId, clientSecret }),
  };
};

const put = (token: string, body: unknown, ifMatch?: string) =>
  callApi(service.baseUrl, CONTROLS, {
    method: 'PUT',
    token,
    body,
    ...(ifMatch !== undefined && { headers: { 'If-Match': ifMatch } }),
  });

const get = (token: string, path = '') => callApi(service.baseUrl, `${CONTROLS}${path}`, { token });

describe('payment controls', () => {
  it('answers the empty document before the first change, then stores each version with its ETag', async () => {
    const { token, clientId } = await clientOf();
    const empty = await get(token);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ approvalRules: [], approvalExpiry: 'P7D', limits: [] });
    expect(empty.headers.get('etag')).toBe('"0"');

    // The first change needs no If-Match.
    const first = await put(token, DOCUMENT);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual(DOCUMENT);
    expect(first.headers.get('etag')).toBe('"1"');
    expect((await get(token)).body).toEqual(DOCUMENT);

    const second = await put(token, { approvalRules: [], limits: [] }, '"1"');
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body).toEqual({ approvalRules: [], approvalExpiry: 'P7D', limits: [] });
    expect(second.headers.get('etag')).toBe('"2"');

    const versions = await get(token, '/versions');
    expect(versions.status).toBe(200);
    expect(versions.body.map((entry: { version: number }) => entry.version)).toEqual([2, 1]);
    expect(versions.body[1]).toMatchObject({ etag: '"1"', clientId, controls: DOCUMENT });
    expect(Date.parse(versions.body[1].createdAt)).not.toBeNaN();
    expect(
      (await get(token, '/versions?before=2')).body.map((entry: { version: number }) => entry.version),
    ).toEqual([1]);
  }, 60_000);

  it('refuses a stale If-Match with 412 and a missing one with 428 once a document exists, changing nothing', async () => {
    const { token } = await clientOf();
    expect((await put(token, DOCUMENT, '"1"')).status).toBe(412);
    expect((await put(token, DOCUMENT)).status).toBe(200);
    const missing = await put(token, { limits: [] });
    expect(missing.status).toBe(428);
    expect(missing.body.error).toBe('precondition_required');
    const stale = await put(token, { limits: [] }, '"0"');
    expect(stale.status).toBe(412);
    expect(stale.body.error).toBe('precondition_failed');
    const current = await get(token);
    expect(current.body).toEqual(DOCUMENT);
    expect(current.headers.get('etag')).toBe('"1"');
  }, 60_000);

  it('lets exactly one of two changes from the same version through', async () => {
    const { token } = await clientOf();
    const answers = await Promise.all([put(token, DOCUMENT, '"0"'), put(token, { limits: [] }, '"0"')]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 412]);
    expect((await get(token, '/versions')).body).toHaveLength(1);
  }, 60_000);

  it('refuses a document that breaks a rule, naming every problem, and keeps the current one', async () => {
    const { token } = await clientOf();
    const refused = await put(token, {
      approvalRules: [
        { name: 'a', minimumAmount: '10.00', approvalsRequired: 4 },
        { name: 'a', currency: 'JPY', minimumAmount: '10.5', approvalsRequired: 1 },
        { name: 'b', currency: 'XXX', approvalsRequired: 1 },
      ],
      approvalExpiry: 'P31D',
      limits: [
        { currency: 'EUR', period: 'week', maxAmount: '1', onBreach: 'reject' },
        { currency: 'EUR', period: 'day', onBreach: 'approval' },
        { currency: 'EUR', period: 'transaction', maxAmount: '1.001', maxCount: 3, onBreach: 'reject' },
      ],
    });
    expect(refused.status).toBe(400);
    const named = refused.body.invalidParams.map((param: { name: string }) => param.name).sort();
    expect(named).toEqual(['approvalRules[0].approvalsRequired', 'limits[0].period'].sort());
    // The shape is right: the rules beyond it are checked, each named.
    const rules = await put(token, {
      approvalRules: [
        { name: 'a', minimumAmount: '10.00', approvalsRequired: 3 },
        { name: 'a', currency: 'JPY', minimumAmount: '10.5', approvalsRequired: 1 },
        { name: 'b', currency: 'XXX', approvalsRequired: 1 },
      ],
      approvalExpiry: 'P31D',
      limits: [
        { currency: 'EUR', period: 'day', onBreach: 'approval' },
        { currency: 'EUR', period: 'transaction', maxAmount: '1.001', maxCount: 3, onBreach: 'reject' },
        { currency: 'EUR', period: 'day', maxCount: 3, onBreach: 'reject' },
      ],
    });
    expect(rules.status).toBe(400);
    expect(rules.body.invalidParams.map((param: { name: string }) => param.name).sort()).toEqual(
      [
        'approvalRules[0].currency',
        'approvalRules[1].name',
        'approvalRules[1].minimumAmount',
        'approvalRules[2].currency',
        'approvalExpiry',
        'limits[0]',
        'limits[1].maxAmount',
        'limits[1].maxCount',
        'limits[2]',
      ].sort(),
    );
    expect((await get(token)).headers.get('etag')).toBe('"0"');
    expect((await get(token, '/versions')).body).toEqual([]);
  }, 60_000);

  it('shows another tenant nothing, and asks for the payment-controls:manage scope', async () => {
    const mine = await clientOf();
    expect((await put(mine.token, DOCUMENT)).status).toBe(200);
    const other = await clientOf();
    const theirs = await get(other.token);
    expect(theirs.body).toEqual({ approvalRules: [], approvalExpiry: 'P7D', limits: [] });
    expect(theirs.headers.get('etag')).toBe('"0"');
    expect((await get(other.token, '/versions')).body).toEqual([]);
    // Another client of the same tenant sees the tenant's document.
    const colleague = await clientOf('payment-controls:manage', mine.tenant);
    expect((await get(colleague.token)).body).toEqual(DOCUMENT);

    const reader = await clientOf('transactions:read transactions:write', mine.tenant);
    const refused = await get(reader.token);
    expect(refused.status).toBe(403);
    expect(refused.body.error_description).toContain('payment-controls:manage');
  }, 60_000);
});
