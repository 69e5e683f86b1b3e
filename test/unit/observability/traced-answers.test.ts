import { createSocket } from 'node:dgram';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * An HTTP handler traced as on Lambda (the Tracer loads where AWS_EXECUTION_ENV is set), its
 * segments sent to a local stand-in for the X-Ray daemon: what reaches X-Ray of its answer.
 */
const ACCOUNT_NUMBER = 'GB29NWBK60161331926819';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('traced HTTP handlers', () => {
  it('send their trace without their answer, which may hold account numbers', async () => {
    const daemon = createSocket('udp4');
    const documents: string[] = [];
    daemon.on('message', (message) => documents.push(message.toString('utf8')));
    await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
    try {
      vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs24.x');
      vi.stubEnv('LAMBDA_TASK_ROOT', process.cwd());
      vi.stubEnv(
        '_X_AMZN_TRACE_ID',
        'Root=1-6745f1a0-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1',
      );
      vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', `127.0.0.1:${daemon.address().port}`);
      vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'SILENT');
      vi.resetModules();
      const { default: middy } = await import('@middy/core');
      const { observedHttp } = await import('#shared/observability');
      const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
        .use(observedHttp())
        .handler(async () => ({ statusCode: 200, body: JSON.stringify({ debtorAccount: ACCOUNT_NUMBER }) }));
      const answer = await handler(
        { httpMethod: 'GET', resource: '/x', requestContext: {} } as APIGatewayProxyEvent,
        { awsRequestId: 'request-1', functionName: 'test' } as Context,
      );
      expect(answer.body).toContain(ACCOUNT_NUMBER);
      await vi.waitFor(() => expect(documents.join('\n')).toContain('"type":"subsegment"'));
      expect(documents.join('\n')).not.toContain(ACCOUNT_NUMBER);
    } finally {
      daemon.close();
    }
  });
});
