/** The `Prefer: wait=N` bounds (DESIGN section 14): at least 1 s, at most 60 s. */
export const MIN_WAIT_SECONDS = 1;
export const MAX_WAIT_SECONDS = 60;

/**
 * The seconds a client asks an async run endpoint to wait (`Prefer: wait=N`, RFC 7240), or null.
 * The header may hold several preferences (`respond-async, wait=10`), in one header or many;
 * the first `wait` counts. A `wait` that is not a whole number from 1 to 60 is ignored, as RFC
 * 7240 (section 2) lets a server ignore a preference it cannot honour: the answer is then the
 * usual 202, without Preference-Applied.
 */
export function waitPreferenceOf(header: string | string[] | undefined): number | null {
  if (header === undefined) return null;
  const text = Array.isArray(header) ? header.join(',') : header;
  for (const preference of text.split(',')) {
    // A preference's parameters follow `;` and do not concern us.
    const [token] = preference.split(';');
    const match = /^\s*wait\s*=\s*"?([^"\s]*)"?\s*$/i.exec(token ?? '');
    if (!match) continue;
    const value = match[1] ?? '';
    if (!/^\d{1,2}$/.test(value)) return null;
    const seconds = Number(value);
    return seconds >= MIN_WAIT_SECONDS && seconds <= MAX_WAIT_SECONDS ? seconds : null;
  }
  return null;
}
