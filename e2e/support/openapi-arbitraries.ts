import fc from 'fast-check';

type Schema = Record<string, unknown>;
export type Components = Record<string, Schema>;

/** Values that break schemas: wrong types, huge and odd strings, extreme numbers. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1e308, -1e308, 2 ** 53 + 1, '', ' ', '0', 'null', '__proto__', '../../etc/passwd', "' OR 1=1 --", '\u0000', '😀'.repeat(50)),
  fc.string({ maxLength: 40 }),
  fc.string({ minLength: 20_000, maxLength: 20_000, unit: 'grapheme' }).map((text) => text || 'x'.repeat(20_000)),
  fc.integer(),
  fc.double(),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);

/** Fields whose valid values reach outside the test (URLs the services would call): kept local. */
const LOCAL_URLS = ['https://127.0.0.1:9/hook', 'https://localhost:9/poll', 'http://127.0.0.1:9/items'];

/**
 * A value that satisfies `schema` (as far as the document says: $ref, anyOf, type, enum,
 * const, string and number bounds, object properties, array items).
 */
export function valueOf(schema: Schema, components: Components, depth = 0, name = ''): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') return valueOf(components[schema.$ref.split('/').pop()!]!, components, depth, name);
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Schema[]).map((option) => valueOf(option, components, depth, name)));
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (/url|endpoint/i.test(name)) return fc.constantFrom(...LOCAL_URLS);
  const types = ([schema.type].flat().filter(Boolean) as string[]).filter((type) => !(schema.not && type === 'null'));
  if (types.length === 0) return depth > 2 ? fc.string({ maxLength: 8 }) : fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((type) => valueOfType(type, schema, components, depth, name)));
}

function valueOfType(type: string, schema: Schema, components: Components, depth: number, name: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      if (schema.format === 'date-time' || schema.format === 'date') return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
      return fc.string({ minLength: (schema.minLength as number | undefined) ?? 0, maxLength: Math.min((schema.maxLength as number | undefined) ?? 32, 32) });
    case 'integer':
      return fc.integer({ min: (schema.minimum as number | undefined) ?? -1000, max: (schema.maximum as number | undefined) ?? 100_000 });
    case 'number':
      return fc.double({ min: (schema.minimum as number | undefined) ?? -1000, max: (schema.maximum as number | undefined) ?? 100_000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(schema.items ? valueOf(schema.items as Schema, components, depth + 1, name) : fc.string({ maxLength: 8 }), {
        minLength: (schema.minItems as number | undefined) ?? 0,
        maxLength: Math.min((schema.maxItems as number | undefined) ?? 3, 3),
      });
    case 'object':
      return objectOf(schema, components, depth);
    default:
      return fc.constant(null);
  }
}

function objectOf(schema: Schema, components: Components, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  if (depth > 3 || Object.keys(properties).length === 0) return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 });
  const record = Object.fromEntries(Object.entries(properties).map(([key, property]) => [key, valueOf(property, components, depth + 1, key)]));
  return fc.record(record, { requiredKeys: [...required].filter((key) => key in properties) });
}

/** A body that breaks `schema` in one way: a required field gone, a field of the wrong type, not an object at all. */
export function mutationOf(schema: Schema, components: Components): fc.Arbitrary<unknown> {
  const valid = valueOf(schema, components);
  return fc.oneof(
    fc.tuple(valid, fc.nat()).map(([body, pick]) => {
      if (!isObject(body)) return body;
      const keys = Object.keys(body);
      if (keys.length === 0) return body;
      const copy = { ...body };
      delete copy[keys[pick % keys.length]!];
      return copy;
    }),
    fc.tuple(valid, fc.nat(), hostileValue).map(([body, pick, value]) => {
      const target = resolve(schema, components);
      const keys = Object.keys((target.properties ?? {}) as object);
      if (!isObject(body) || keys.length === 0) return value;
      return { ...body, [keys[pick % keys.length]!]: value };
    }),
    fc.tuple(valid, fc.string({ minLength: 1, maxLength: 12 }), hostileValue).map(([body, key, value]) => (isObject(body) ? { ...body, [key]: value } : body)),
    hostileValue,
  );
}

function resolve(schema: Schema, components: Components): Schema {
  return typeof schema.$ref === 'string' ? resolve(components[schema.$ref.split('/').pop()!]!, components) : schema;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
