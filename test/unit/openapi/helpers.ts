import type { oas31 } from 'zod-openapi';
import { ROUTES, type Route } from '#routes';

export type OpenApiDocument = oas31.OpenAPIObject;
export type JsonSchema = { [keyword: string]: unknown };

/** An operation as the tests read it: references in parameters and responses already refused. */
export interface Operation extends Omit<oas31.OperationObject, 'parameters' | 'responses'> {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: oas31.SecurityRequirementObject[];
  parameters?: (oas31.ParameterObject & { schema: JsonSchema })[];
  requestBody?: oas31.RequestBodyObject & { content: Record<string, { schema?: JsonSchema }> };
  responses: Record<
    string,
    {
      description: string;
      headers?: Record<string, { description?: string; required?: boolean; schema: JsonSchema }>;
      content?: Record<string, { schema?: JsonSchema }>;
    }
  >;
}

const routeOf = (operationId: string): Route => {
  const route = ROUTES.find((candidate) => candidate.operationId === operationId);
  if (!route) throw new Error(`No route ${operationId} in ROUTES`);
  return route;
};

/** The list and cancel routes, taken from the route table so the tests describe what is served. */
export const LIST_ROUTE: Route = routeOf('listCreditTransfers');
export const CANCEL_ROUTE: Route = routeOf('cancelCreditTransfer');

const LATER_IDS = new Set([LIST_ROUTE.operationId, CANCEL_ROUTE.operationId]);

/** The route table without the list and cancel routes. */
export const routesWithoutLater = (): Route[] => ROUTES.filter((route) => !LATER_IDS.has(route.operationId));

/** The route table with the list and cancel routes (the table as it is). */
export const routesWithLater = (): Route[] => [...routesWithoutLater(), LIST_ROUTE, CANCEL_ROUTE];

export interface Located {
  method: string;
  path: string;
  operation: Operation;
}

export const operationsOf = (document: { paths?: object }): Located[] =>
  Object.entries(document.paths ?? {}).flatMap(([path, item]: [string, object]) =>
    Object.entries(item).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operation: operation as Operation,
    })),
  );

export const operation = (document: OpenApiDocument, operationId: string): Operation => {
  const found = operationsOf(document).find((entry) => entry.operation.operationId === operationId);
  if (!found) throw new Error(`No operation ${operationId}`);
  return found.operation;
};

const isObject = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Resolves a local JSON pointer reference (`#/components/schemas/X`) in the document. */
export const resolveRef = (document: unknown, ref: string): unknown => {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, segment) => (isObject(node) ? node[segment] : undefined), document);
};

/** The schema itself, or the component it references. */
export const deref = (document: OpenApiDocument, schema: unknown): JsonSchema => {
  if (isObject(schema) && typeof schema.$ref === 'string') {
    const target = resolveRef(document, schema.$ref);
    if (!isObject(target)) throw new Error(`Unresolved ${schema.$ref}`);
    return deref(document, target);
  }
  if (!isObject(schema)) throw new Error('Not a schema');
  return schema;
};

export const component = (document: OpenApiDocument, name: string): JsonSchema =>
  deref(document, { $ref: `#/components/schemas/${name}` });

/** Property schema at a dotted path (`check.amount`, `identifiers[].number`), following refs. */
export const propertyAt = (document: OpenApiDocument, schema: JsonSchema, path: string): JsonSchema =>
  path.split('.').reduce<JsonSchema>((current, segment) => {
    const isList = segment.endsWith('[]');
    const name = isList ? segment.slice(0, -2) : segment;
    const object = deref(document, current);
    const properties = isObject(object.properties) ? object.properties : {};
    const property = deref(document, properties[name]);
    return isList ? deref(document, property.items) : property;
  }, schema);

/** Every field path of a schema: `a`, `a.b`, `list[].c`, components followed (to a depth). */
export const fieldPaths = (document: OpenApiDocument, schema: unknown, prefix = '', depth = 0): string[] => {
  if (depth > 8) return [];
  const resolved = deref(document, schema);
  if (resolved.type === 'array') return fieldPaths(document, resolved.items, `${prefix}[]`, depth + 1);
  if (!isObject(resolved.properties)) return [];
  return Object.entries(resolved.properties).flatMap(([name, property]) => {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    return [path, ...fieldPaths(document, property, path, depth + 1)];
  });
};

/** Every node of a JSON value with its location, for whole-document checks. */
export const walk = (
  value: unknown,
  visit: (node: JsonSchema, location: string) => void,
  location = '#',
): void => {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      walk(item, visit, `${location}/${index}`);
    });
    return;
  }
  if (!isObject(value)) return;
  visit(value, location);
  for (const [key, item] of Object.entries(value)) walk(item, visit, `${location}/${key}`);
};
