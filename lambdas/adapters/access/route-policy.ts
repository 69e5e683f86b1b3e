import type { PolicyDocument, Statement } from 'aws-lambda';
import type { Route } from '#routes';

/**
 * The IAM policy the authorizer returns, built from the route table and evaluated the way API
 * Gateway evaluates it: Allow on every protected route for a verified token. Each route's scope
 * is checked by its handler's middleware (#shared/required-scope), where the 403 can name it;
 * API Gateway answers a Deny with one fixed response that cannot.
 */
export const INVOKE_ACTION = 'execute-api:Invoke';

/** `arn:aws:execute-api:{region}:{account}:{apiId}/{stage}` of a method ARN. */
export const stageArnOf = (methodArn: string): string => {
  const [apiArn, stage] = methodArn.split('/');
  if (!apiArn?.startsWith('arn:') || !apiArn.includes(':execute-api:') || !stage) {
    throw new Error(`Not an API Gateway method ARN: ${methodArn}`);
  }
  return `${apiArn}/${stage}`;
};

/** The method ARN of a route: each `{param}` of its path is any value. */
export const routeArn = (stageArn: string, route: Pick<Route, 'method' | 'path'>): string =>
  `${stageArn}/${route.method}${route.path.replace(/\{[^}]+\}/g, '*')}`;

export const routePolicy = (methodArn: string, routes: readonly Route[]): PolicyDocument => {
  const stageArn = stageArnOf(methodArn);
  const protectedRoutes = routes
    .filter((route) => route.scope !== undefined)
    .map((r) => routeArn(stageArn, r));
  // A policy must hold a statement; with no protected route there is nothing to allow.
  const statement: Statement =
    protectedRoutes.length > 0
      ? { Effect: 'Allow', Action: INVOKE_ACTION, Resource: protectedRoutes }
      : { Effect: 'Deny', Action: INVOKE_ACTION, Resource: `${stageArn}/*` };
  return { Version: '2012-10-17', Statement: [statement] };
};

const asList = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/**
 * Patterns compiled so far: every request is checked against the same route ARNs, so each is
 * compiled once. Bounded all the same, since a policy is data.
 */
const compiledPatterns = new Map<string, RegExp>();
const MAX_COMPILED_PATTERNS = 1000;

/** IAM wildcards: `*` any run of characters (slashes too), `?` any one character. */
const wildcardMatches = (pattern: string, value: string, ignoreCase = false): boolean => {
  const flags = ignoreCase ? 'is' : 's';
  const key = `${flags} ${pattern}`;
  let compiled = compiledPatterns.get(key);
  if (compiled === undefined) {
    const source = pattern
      .split('')
      .map((character) =>
        character === '*' ? '.*' : character === '?' ? '.' : character.replace(/[\\^$.|+()[\]{}]/g, '\\$&'),
      )
      .join('');
    compiled = new RegExp(`^${source}$`, flags);
    if (compiledPatterns.size >= MAX_COMPILED_PATTERNS) compiledPatterns.clear();
    compiledPatterns.set(key, compiled);
  }
  return compiled.test(value);
};

const statementApplies = (statement: Statement, action: string, resource: string): boolean => {
  const actionMatches =
    'Action' in statement
      ? asList(statement.Action).some((pattern) => wildcardMatches(pattern, action, true))
      : !asList(statement.NotAction).some((pattern) => wildcardMatches(pattern, action, true));
  const resourceMatches =
    'Resource' in statement && statement.Resource !== undefined
      ? asList(statement.Resource).some((pattern) => wildcardMatches(pattern, resource))
      : 'NotResource' in statement && statement.NotResource !== undefined
        ? !asList(statement.NotResource).some((pattern) => wildcardMatches(pattern, resource))
        : false;
  return actionMatches && resourceMatches;
};

/**
 * API Gateway's decision for one request: an explicit Deny wins, otherwise an Allow is needed.
 * Conditions are not evaluated: a statement with a Condition never allows, and always may deny.
 */
export const isAllowed = (
  policy: PolicyDocument,
  methodArn: string,
  action: string = INVOKE_ACTION,
): boolean => {
  const applying = policy.Statement.filter((statement) => statementApplies(statement, action, methodArn));
  if (applying.some((statement) => statement.Effect === 'Deny')) return false;
  return applying.some((statement) => statement.Effect === 'Allow' && statement.Condition === undefined);
};
