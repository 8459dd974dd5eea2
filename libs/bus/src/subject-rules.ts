// NATS subject and name rules, shared by both buses so embedded mode refuses exactly what a
// NATS server would refuse, instead of accepting a configuration that breaks in production.

const tokensOf = (subject: string): string[] => subject.split('.');

/** Throws unless `subject` is a valid subject; wildcards only where `allowWildcards`. */
export function assertSubject(subject: string, allowWildcards: boolean): void {
  const tokens = tokensOf(subject);
  const valid =
    subject.length > 0 &&
    tokens.every((token, index) => {
      if (token.length === 0 || /\s/.test(token)) return false;
      if (token === '*') return allowWildcards;
      if (token === '>') return allowWildcards && index === tokens.length - 1;
      return !token.includes('*') && !token.includes('>');
    });
  if (!valid) {
    throw new Error(`invalid subject "${subject}"${allowWildcards ? '' : ' (no wildcards allowed here)'}`);
  }
}

/** Throws unless `name` can name a stream, a consumer or a prefix (no dots, wildcards, spaces). */
export function assertName(kind: string, name: string): void {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) {
    throw new Error(`invalid ${kind} "${name}": use letters, digits, "-" and "_" only`);
  }
}

/** Does the literal `subject` match `pattern` (which may hold `*` and a trailing `>`)? */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = tokensOf(pattern);
  const s = tokensOf(subject);
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

/** Is there at least one literal subject that both patterns match? */
export function subjectsOverlap(a: string, b: string): boolean {
  const x = tokensOf(a);
  const y = tokensOf(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (i >= x.length || i >= y.length) return false;
    if (x[i] === '>' || y[i] === '>') return true;
    if (x[i] !== '*' && y[i] !== '*' && x[i] !== y[i]) return false;
  }
  return true;
}

/** Does `outer` match every subject that `inner` matches? */
export function subjectCovers(outer: string, inner: string): boolean {
  const o = tokensOf(outer);
  const n = tokensOf(inner);
  for (let i = 0; i < o.length; i++) {
    if (o[i] === '>') return n.length > i;
    if (i >= n.length || n[i] === '>') return false;
    if (o[i] !== '*' && (n[i] === '*' || o[i] !== n[i])) return false;
  }
  return o.length === n.length;
}

/**
 * Throws unless the headers can travel on NATS as they are: names starting with `Nats-` belong
 * to the server (the message id travels as `Nats-Msg-Id`), and a line break would end the header
 * block. Both buses check this, so a header that works in embedded mode works in NATS mode.
 */
export function assertHeaders(headers: Record<string, string> | undefined): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) throw new Error(`invalid header name "${name}"`);
    if (/^nats-/i.test(name)) throw new Error(`header "${name}" is reserved for NATS`);
    if (/[\r\n]/.test(value)) throw new Error(`header "${name}" contains a line break`);
  }
}
