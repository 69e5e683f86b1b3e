import { describe, expect, it } from 'vitest';
import { callApi, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * The local runtime checks every AWS SDK call of a function against that function's IAM policies,
 * as the synthesized stack gives them. With one grant removed (LOCAL_IAM_WITHOUT) the route that
 * needs it fails as it would on AWS: the SDK raises AccessDeniedException, the handler answers 500.
 */
const STATUS_PATH = '/v1/payments/credit-transfers/no-such-payment/status';

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
