/**
 * Ready-to-paste code for one request to a run endpoint: curl, JavaScript (Node 18+, ESM,
 * fetch) and Python (requests). Each reads the token from the environment variable
 * RUNLINE_TOKEN, never holds one, and makes a new x-idempotency-key each time it runs (a retry
 * of the same request should send the same key again; see the spec's retry guidance).
 *
 * Every value is written as a literal of the target language by a serializer, never pasted
 * into a template by hand, so any JSON body (quotes, backslashes, `'`, unicode, `$`, newlines)
 * reaches the API exactly as it is in the example.
 */

/** The environment variable the snippets read the token from. */
export const TOKEN_VARIABLE = 'RUNLINE_TOKEN';
/** How the token appears in the example's headers: a placeholder, never a real token. */
export const TOKEN_PLACEHOLDER = `$${TOKEN_VARIABLE}`;

export interface SnippetRequest {
  url: string;
  body: Record<string, unknown>;
}

const IDEMPOTENCY_KEY_NOTE = 'A new key per request: send the same key again to retry this request without starting a second run.';

/** POSIX shell single quotes: everything literal; a `'` is closed, escaped and reopened. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export function curlSnippet(request: SnippetRequest): string {
  return [
    `curl -sS -X POST ${shellQuote(request.url)}`,
    `  -H "Authorization: Bearer $${TOKEN_VARIABLE}"`,
    `  -H 'Content-Type: application/json'`,
    // od and tr exist wherever a POSIX shell does (uuidgen does not on every Linux).
    `  -H "x-idempotency-key: $(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')"`,
    `  --data-raw ${shellQuote(JSON.stringify(request.body, null, 2))}`,
  ].join(' \\\n');
}

export function javascriptSnippet(request: SnippetRequest): string {
  return `import { randomUUID } from 'node:crypto';

const body = ${javascriptLiteral(request.body, '')};

const response = await fetch(${JSON.stringify(request.url)}, {
  method: 'POST',
  headers: {
    Authorization: \`Bearer \${process.env.${TOKEN_VARIABLE}}\`,
    'Content-Type': 'application/json',
    // ${IDEMPOTENCY_KEY_NOTE}
    'x-idempotency-key': randomUUID(),
  },
  body: JSON.stringify(body),
});
console.log(response.status, await response.text());
`;
}

export function pythonSnippet(request: SnippetRequest): string {
  return `import os
import uuid

import requests

body = ${pythonLiteral(request.body, '')}

response = requests.post(
    ${JSON.stringify(request.url)},
    headers={
        "Authorization": "Bearer " + os.environ["${TOKEN_VARIABLE}"],
        "Content-Type": "application/json",
        # ${IDEMPOTENCY_KEY_NOTE}
        "x-idempotency-key": str(uuid.uuid4()),
    },
    json=body,
    timeout=60,
)
print(response.status_code, response.text)
`;
}

interface LiteralStyle {
  indent: string;
  null: string;
  true: string;
  false: string;
  key: (key: string) => string;
}

/**
 * A JSON value as a literal of a language whose string literals accept JSON's escapes (JS and
 * Python both do), pretty-printed from `indent`.
 */
function literal(value: unknown, style: LiteralStyle, indent: string): string {
  if (value === null || value === undefined) return style.null;
  if (value === true) return style.true;
  if (value === false) return style.false;
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : style.null;
  if (typeof value === 'string') return JSON.stringify(value);
  const inner = indent + style.indent;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => `${inner}${literal(item, style, inner)}`).join(',\n')},\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([key, item]) => `${inner}${style.key(key)}: ${literal(item, style, inner)}`).join(',\n')},\n${indent}}`;
}

const JAVASCRIPT: LiteralStyle = {
  indent: '  ',
  null: 'null',
  true: 'true',
  false: 'false',
  // A plain `"__proto__": …` in an object literal sets the prototype; a computed key is an own property.
  key: (key) => (key === '__proto__' ? `[${JSON.stringify(key)}]` : JSON.stringify(key)),
};

const PYTHON: LiteralStyle = { indent: '    ', null: 'None', true: 'True', false: 'False', key: (key) => JSON.stringify(key) };

export function javascriptLiteral(value: unknown, indent = ''): string {
  return literal(value, JAVASCRIPT, indent);
}

export function pythonLiteral(value: unknown, indent = ''): string {
  return literal(value, PYTHON, indent);
}
