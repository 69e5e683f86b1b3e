// The parts of an OpenAPI 3.1 document this page renders (openapi/openapi.json is the document).

export type JsonSchema = { [keyword: string]: unknown };

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface HeaderObject {
  description: string;
  required?: boolean;
  schema: JsonSchema;
}

export interface MediaTypeObject {
  schema?: JsonSchema;
}

export interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaTypeObject>;
}

export interface RequestBodyObject {
  description: string;
  required: boolean;
  content: Record<string, MediaTypeObject>;
}

export type SecurityRequirement = Record<string, string[]>;

export interface OperationObject {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: SecurityRequirement[];
  parameters?: ParameterObject[];
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject>;
}

export type HttpMethod = 'get' | 'post';
export type PathItemObject = Partial<Record<HttpMethod, OperationObject>>;

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string; 'x-internal': boolean }[];
  tags: { name: string; description: string }[];
  paths: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
  };
}

/**
 * The reference page: the OpenAPI document rendered server-side as one self-contained HTML
 * page (inline CSS, no script, nothing fetched). Every text from the document is escaped.
 */

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);

/** Escapes, then renders the little markdown the descriptions use: paragraphs, `code`, **bold**. */
const prose = (text: string): string =>
  text
    .split(/\n{2,}/)
    .map(
      (paragraph) =>
        `<p>${escapeHtml(paragraph)
          .replace(/`([^`]+)`/g, '<code>$1</code>')
          .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')}</p>`,
    )
    .join('\n');

/** Inline text: like prose, without paragraphs. */
const inline = (text: string): string =>
  escapeHtml(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');

const COMPONENT_REF = '#/components/schemas/';

const isObject = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const componentName = (schema: JsonSchema): string | undefined =>
  typeof schema.$ref === 'string' && schema.$ref.startsWith(COMPONENT_REF)
    ? schema.$ref.slice(COMPONENT_REF.length)
    : undefined;

const schemaAnchor = (name: string): string => `schema-${name}`;
const operationAnchor = (operationId: string): string => `operation-${operationId}`;

const schemaLink = (name: string): string =>
  `<a href="#${escapeHtml(schemaAnchor(name))}">${escapeHtml(name)}</a>`;

/** The type of a schema as a short HTML phrase; components become links. */
const typeOf = (schema: JsonSchema): string => {
  const name = componentName(schema);
  if (name !== undefined) return schemaLink(name);
  if (schema.type === 'array') {
    return isObject(schema.items) ? `array of ${typeOf(schema.items)}` : 'array';
  }
  if (typeof schema.type === 'string') return escapeHtml(schema.type);
  if (Array.isArray(schema.type)) return escapeHtml(schema.type.join(' | '));
  return 'any';
};

const range = (min: unknown, max: unknown, unit: string): string | undefined => {
  const hasMin = typeof min === 'number';
  const hasMax = typeof max === 'number';
  if (hasMin && hasMax) return min === max ? `exactly ${min} ${unit}` : `${min}..${max} ${unit}`;
  if (hasMin) return `at least ${min} ${unit}`;
  if (hasMax) return `at most ${max} ${unit}`;
  return undefined;
};

/** Bounds, pattern, format and allowed values of a schema, as HTML. */
function constraintsOf(schema: JsonSchema): string {
  const parts: string[] = [];
  const length = range(schema.minLength, schema.maxLength, 'characters');
  if (length) parts.push(escapeHtml(length));
  const items = range(schema.minItems, schema.maxItems, 'items');
  if (items) parts.push(escapeHtml(items));
  const value = range(schema.minimum, schema.maximum, '');
  if (value) parts.push(escapeHtml(`value ${value.trim()}`));
  if (typeof schema.format === 'string') parts.push(`format <code>${escapeHtml(schema.format)}</code>`);
  // A format says what its (long, generated) pattern does; show the pattern only without one.
  else if (typeof schema.pattern === 'string')
    parts.push(`pattern <code>${escapeHtml(schema.pattern)}</code>`);
  if (Array.isArray(schema.enum)) {
    parts.push(`one of ${schema.enum.map((item) => `<code>${escapeHtml(String(item))}</code>`).join(', ')}`);
  }
  if (schema.const !== undefined) parts.push(`always <code>${escapeHtml(String(schema.const))}</code>`);
  if (schema.additionalProperties === false) parts.push('no other fields');
  if (isObject(schema.items) && componentName(schema.items) === undefined && schema.items.type !== 'object') {
    const each = constraintsOf(schema.items);
    if (each) parts.push(`each item: ${each}`);
  }
  return parts.join('; ');
}

interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  constraints: string;
  description: string;
}

/**
 * The fields of an object schema, nested inline objects and arrays of them included (as
 * `parent.child` and `list[].child`); a component is linked, and described once in its section.
 */
const fieldRows = (schema: JsonSchema, prefix = '', depth = 0): FieldRow[] => {
  if (depth > 10 || componentName(schema) !== undefined) return [];
  const target = schema.type === 'array' && isObject(schema.items) ? schema.items : schema;
  if (componentName(target) !== undefined || !isObject(target.properties)) return [];
  const itemPrefix = target === schema ? prefix : `${prefix}[]`;
  const required = new Set(Array.isArray(target.required) ? target.required : []);
  return Object.entries(target.properties).flatMap(([field, property]) => {
    if (!isObject(property)) return [];
    const name = itemPrefix === '' ? field : `${itemPrefix}.${field}`;
    const row: FieldRow = {
      name,
      type: typeOf(property),
      required: required.has(field),
      constraints: constraintsOf(property),
      description: typeof property.description === 'string' ? property.description : '',
    };
    return [row, ...fieldRows(property, name, depth + 1)];
  });
};

const fieldTable = (rows: FieldRow[]): string => {
  if (rows.length === 0) return '';
  const body = rows
    .map(
      (row) =>
        `<tr><td><code>${escapeHtml(row.name)}</code></td><td>${row.type}</td><td>${row.required ? 'yes' : 'no'}</td>` +
        `<td>${row.constraints}</td><td>${inline(row.description)}</td></tr>`,
    )
    .join('\n');
  return (
    '<table><thead><tr><th>Field</th><th>Type</th><th>Required</th><th>Constraints</th><th>Description</th></tr></thead>' +
    `<tbody>\n${body}\n</tbody></table>`
  );
};

/** A schema as its type, constraints and, for objects, its field table. */
const schemaBlock = (schema: JsonSchema, components: Record<string, JsonSchema>): string => {
  const name = componentName(schema);
  const resolved = name === undefined ? schema : (components[name] ?? {});
  const summary = [typeOf(schema), constraintsOf(name === undefined ? schema : {})]
    .filter(Boolean)
    .join('; ');
  return `<p>Schema: ${summary}</p>\n${fieldTable(fieldRows(resolved))}`;
};

const contentBlock = (
  content: Record<string, MediaTypeObject> | undefined,
  components: Record<string, JsonSchema>,
): string =>
  Object.entries(content ?? {})
    .map(
      ([mediaType, media]) =>
        `<div class="media"><p class="media-type"><code>${escapeHtml(mediaType)}</code></p>` +
        `${media.schema ? schemaBlock(media.schema, components) : ''}</div>`,
    )
    .join('\n');

const parametersBlock = (parameters: ParameterObject[] | undefined): string => {
  if (!parameters || parameters.length === 0) return '';
  const rows = parameters
    .map(
      (parameter) =>
        `<tr><td><code>${escapeHtml(parameter.name)}</code></td><td>${escapeHtml(parameter.in)}</td>` +
        `<td>${parameter.required ? 'yes' : 'no'}</td><td>${typeOf(parameter.schema)}</td>` +
        `<td>${constraintsOf(parameter.schema)}</td><td>${inline(parameter.description ?? '')}</td></tr>`,
    )
    .join('\n');
  return (
    '<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Required</th><th>Type</th>' +
    `<th>Constraints</th><th>Description</th></tr></thead><tbody>\n${rows}\n</tbody></table>`
  );
};

const requestBodyBlock = (
  requestBody: RequestBodyObject | undefined,
  components: Record<string, JsonSchema>,
): string =>
  requestBody
    ? `<h4>Request body (${requestBody.required ? 'required' : 'optional'})</h4>\n${prose(requestBody.description)}\n` +
      contentBlock(requestBody.content, components)
    : '';

const headersBlock = (headers: Record<string, HeaderObject> | undefined): string => {
  const entries = Object.entries(headers ?? {});
  if (entries.length === 0) return '';
  const items = entries
    .map(
      ([name, header]) =>
        `<li>Header <code>${escapeHtml(name)}</code>${header.required ? '' : ' (optional)'}: ` +
        `${inline(header.description)} <span class="constraints">${[
          typeOf(header.schema),
          constraintsOf(header.schema),
        ]
          .filter(Boolean)
          .join('; ')}</span></li>`,
    )
    .join('\n');
  return `<ul>${items}</ul>`;
};

const responsesBlock = (
  responses: Record<string, ResponseObject>,
  components: Record<string, JsonSchema>,
): string => {
  const items = Object.entries(responses)
    .map(
      ([status, response]) =>
        `<div class="response"><h5><span class="status">${escapeHtml(status)}</span> ${inline(response.description)}</h5>` +
        `${headersBlock(response.headers)}${contentBlock(response.content, components)}</div>`,
    )
    .join('\n');
  return `<h4>Responses</h4>\n${items}`;
};

const scopeOf = (operation: OperationObject): string => {
  const scopes = [...new Set(operation.security.flatMap((requirement) => Object.values(requirement).flat()))];
  if (operation.security.length === 0) return 'none (public)';
  return scopes.length > 0 ? scopes.map((scope) => `<code>${escapeHtml(scope)}</code>`).join(', ') : 'none';
};

/** How a caller authenticates: each alternative requirement, joined by "or". */
const authenticationOf = (operation: OperationObject): string => {
  if (operation.security.length === 0) return 'none';
  return operation.security
    .map((requirement) => {
      const schemes = Object.keys(requirement);
      if (schemes.length === 0) return 'none of the schemes (see the description)';
      return schemes.map((scheme) => `<code>${escapeHtml(scheme)}</code>`).join(' and ');
    })
    .join(' or ');
};

interface Entry {
  method: string;
  path: string;
  operation: OperationObject;
}

const operationsOf = (document: OpenApiDocument): Entry[] =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
  );

const operationSection = (
  { method, path, operation }: Entry,
  components: Record<string, JsonSchema>,
): string =>
  `<section class="operation" id="${escapeHtml(operationAnchor(operation.operationId))}">
<h3><span class="method">${escapeHtml(method)}</span> <code>${escapeHtml(path)}</code></h3>
<p class="summary">${escapeHtml(operation.summary)}</p>
<dl><dt>operationId</dt><dd><code>${escapeHtml(operation.operationId)}</code></dd>
<dt>Required scope</dt><dd>${scopeOf(operation)}</dd>
<dt>Authentication</dt><dd>${authenticationOf(operation)}</dd>
<dt>Tags</dt><dd>${operation.tags.map(escapeHtml).join(', ')}</dd></dl>
${prose(operation.description)}
${parametersBlock(operation.parameters)}
${requestBodyBlock(operation.requestBody, components)}
${responsesBlock(operation.responses, components)}
</section>`;

const securityBlock = (document: OpenApiDocument): string =>
  Object.entries(document.components.securitySchemes)
    .map(([name, scheme]) => {
      const flows = isObject(scheme.flows) ? Object.entries(scheme.flows) : [];
      const flowText = flows
        .map(([flowName, flow]) => {
          if (!isObject(flow)) return '';
          const scopes = isObject(flow.scopes) ? Object.entries(flow.scopes) : [];
          const rows = scopes
            .map(
              ([scope, meaning]) =>
                `<tr><td><code>${escapeHtml(scope)}</code></td><td>${escapeHtml(String(meaning))}</td></tr>`,
            )
            .join('\n');
          return (
            `<p>Flow <code>${escapeHtml(flowName)}</code>, token URL <code>${escapeHtml(String(flow.tokenUrl ?? ''))}</code>.</p>` +
            `<table><thead><tr><th>Scope</th><th>Meaning</th></tr></thead><tbody>\n${rows}\n</tbody></table>`
          );
        })
        .join('\n');
      const kind = [scheme.type, scheme.scheme, scheme.bearerFormat].filter(
        (part) => typeof part === 'string',
      );
      return (
        `<h3><code>${escapeHtml(name)}</code> (${escapeHtml(kind.join(', '))})</h3>\n` +
        `${typeof scheme.description === 'string' ? prose(scheme.description) : ''}\n${flowText}`
      );
    })
    .join('\n');

const schemaSections = (components: Record<string, JsonSchema>): string =>
  Object.entries(components)
    .map(([name, schema]) => {
      const description = typeof schema.description === 'string' ? prose(schema.description) : '';
      const summary = [typeOf(schema), constraintsOf(schema)].filter(Boolean).join('; ');
      return (
        `<section class="schema" id="${escapeHtml(schemaAnchor(name))}"><h3>${escapeHtml(name)}</h3>\n${description}` +
        `<p>${summary}</p>\n${fieldTable(fieldRows(schema))}</section>`
      );
    })
    .join('\n');

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 75rem; padding: 1rem 2rem; color: #1b1b1b; line-height: 1.45; }
h1 { margin-bottom: 0; } h2 { border-bottom: 2px solid #ccc; margin-top: 2.5rem; }
code { font-family: ui-monospace, monospace; font-size: 0.9em; background: #f3f3f3; padding: 0 0.2em; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f6f6f6; }
.operation { border-top: 1px solid #ddd; padding-top: 0.5rem; margin-top: 1.5rem; }
.method { display: inline-block; min-width: 3.5rem; padding: 0.1rem 0.4rem; border-radius: 4px; background: #114a7a; color: #fff; font-size: 0.85em; text-align: center; }
.summary { font-weight: 600; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2rem 1rem; }
dt { color: #555; } dd { margin: 0; }
.status { font-family: ui-monospace, monospace; }
.response h5 { font-size: 1rem; margin: 0.8rem 0 0.2rem; }
.media-type { margin: 0.3rem 0; }
nav ul { columns: 2; }
`;

/** The whole page. */
export const renderReferencePage = (document: OpenApiDocument): string => {
  const components = document.components.schemas;
  const entries = operationsOf(document);
  const toc = entries
    .map(
      ({ method, path, operation }) =>
        `<li><a href="#${escapeHtml(operationAnchor(operation.operationId))}">${escapeHtml(method)} ${escapeHtml(path)}</a>` +
        ` ${escapeHtml(operation.summary)}</li>`,
    )
    .join('\n');
  const title = `${document.info.title} ${document.info.version}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>${escapeHtml(document.info.title)}</h1><p>Version ${escapeHtml(document.info.version)} · OpenAPI ${escapeHtml(document.openapi)} · <a href="openapi.json">openapi.json</a></p></header>
${prose(document.info.description)}
<nav><h2>Contents</h2><ul>
${toc}
</ul></nav>
<h2>Authentication</h2>
${securityBlock(document)}
<h2>Operations</h2>
${entries.map((entry) => operationSection(entry, components)).join('\n')}
<h2>Schemas</h2>
${schemaSections(components)}
</body>
</html>
`;
};
