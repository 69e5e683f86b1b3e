import type { APIGatewayProxyEvent } from 'aws-lambda';

/** Every value of every query parameter: API Gateway's single-value map keeps only the last of a repeat. */
export const queryParameters = (event: APIGatewayProxyEvent): Record<string, string[]> => {
  if (event.multiValueQueryStringParameters) {
    return Object.fromEntries(
      Object.entries(event.multiValueQueryStringParameters).map(([name, values]) => [name, values ?? []]),
    );
  }
  return Object.fromEntries(
    Object.entries(event.queryStringParameters ?? {}).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, [value]]],
    ),
  );
};
