import type { Template } from 'aws-cdk-lib/assertions';

/** Small read-only queries over a synthesized template, so the tests read as statements. */

export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

export const resourcesOf = (template: Template, type: string): Map<string, Resource> => {
  const all = (template.toJSON() as { Resources: Record<string, Resource> }).Resources;
  return new Map(
    Object.entries(all)
      .filter(([, resource]) => resource.Type === type)
      .map(([id, resource]) => [id, { ...resource, Properties: resource.Properties ?? {} }]),
  );
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The logical id a `{ Ref }` points at. */
export const refOf = (value: unknown): string | undefined =>
  isRecord(value) && typeof value.Ref === 'string' ? value.Ref : undefined;

/** Every logical id named by an `Fn::GetAtt` anywhere inside a value. */
export const getAttTargets = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.flatMap(getAttTargets);
  if (!isRecord(value)) return [];
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return [getAtt[0]];
  return Object.values(value).flatMap(getAttTargets);
};

/** Full resource path (`/v1/payments/...`) of every API Gateway resource, by logical id. */
export const resourcePaths = (template: Template): Map<string, string> => {
  const resources = resourcesOf(template, 'AWS::ApiGateway::Resource');
  const paths = new Map<string, string>();
  const pathOf = (id: string): string => {
    const known = paths.get(id);
    if (known !== undefined) return known;
    const resource = resources.get(id);
    if (!resource) throw new Error(`No API Gateway resource ${id}`);
    const parent = refOf(resource.Properties.ParentId);
    const path = `${parent === undefined ? '' : pathOf(parent)}/${String(resource.Properties.PathPart)}`;
    paths.set(id, path);
    return path;
  };
  for (const id of resources.keys()) pathOf(id);
  return paths;
};

/** Every method, keyed `METHOD /path`. */
export const methodsByRoute = (template: Template): Map<string, Resource> => {
  const paths = resourcePaths(template);
  const methods = new Map<string, Resource>();
  for (const method of resourcesOf(template, 'AWS::ApiGateway::Method').values()) {
    const resourceId = refOf(method.Properties.ResourceId);
    const path = resourceId === undefined ? '/' : paths.get(resourceId);
    methods.set(`${String(method.Properties.HttpMethod)} ${path}`, method);
  }
  return methods;
};

/** The logical id of the Lambda function a method's integration invokes. */
export const functionOfMethod = (template: Template, method: Resource): string => {
  const functions = resourcesOf(template, 'AWS::Lambda::Function');
  const integration = method.Properties.Integration;
  const found = getAttTargets(integration).find((id) => functions.has(id));
  if (found === undefined) throw new Error('Method does not invoke a function of this stack');
  return found;
};

/** Every IAM statement that applies to a function's role: inline, attached policies. */
export const statementsOfFunction = (template: Template, functionId: string): Statement[] => {
  const fn = resourcesOf(template, 'AWS::Lambda::Function').get(functionId);
  if (!fn) throw new Error(`No function ${functionId}`);
  const [roleId] = getAttTargets(fn.Properties.Role);
  const role = roleId === undefined ? undefined : resourcesOf(template, 'AWS::IAM::Role').get(roleId);
  if (roleId === undefined || !role) throw new Error(`Function ${functionId} has no role of this stack`);

  const inline = (
    (role.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]
  ).flatMap((policy) => policy.PolicyDocument.Statement);
  const attached = [...resourcesOf(template, 'AWS::IAM::Policy').values()]
    .filter((policy) => ((policy.Properties.Roles ?? []) as unknown[]).some((r) => refOf(r) === roleId))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  return [...inline, ...attached];
};

export const allowedActions = (statements: readonly Statement[]): Set<string> =>
  new Set(
    statements
      .filter((statement) => statement.Effect === 'Allow')
      .flatMap((statement) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action])),
  );
