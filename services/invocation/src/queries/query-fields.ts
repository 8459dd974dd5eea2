/** Reading the plain fields of query requests: proto3 strings are '' when not set. */

/** '' → undefined (no filter). */
export function optional(value: string): string | undefined {
  return value === '' ? undefined : value;
}

/** An ISO 8601 time sent by the gateway, or undefined when empty or not a time. */
export function timeOf(value: string): Date | undefined {
  if (value === '') return undefined;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : time;
}
