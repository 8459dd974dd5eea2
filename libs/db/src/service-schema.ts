import type { DataSource } from 'typeorm';

// Schema names end up unquoted in a libpq `options` string and in SQL, so they are kept to a
// plain lower-case identifier rather than escaped.
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws unless `schema` is a plain lower-case Postgres identifier. */
export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(
      `invalid schema name ${JSON.stringify(schema)}: use lower-case letters, digits and underscores, starting with a letter or underscore (at most 63 characters)`,
    );
  }
}

/** The schema a data source made by `createServiceDataSource` works in. */
export function serviceSchemaOf(dataSource: DataSource): string {
  const { options } = dataSource;
  if (options.type !== 'postgres' || !options.schema) {
    throw new Error('expected a PostgreSQL data source with a schema (use createServiceDataSource)');
  }
  assertSchemaName(options.schema);
  return options.schema;
}

/** `"schema"."table"`, for SQL that must not depend on the connection's search_path. */
export function qualified(schema: string, table: string): string {
  return `"${schema}"."${table}"`;
}
