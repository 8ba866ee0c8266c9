// A URL as mneme may show it (status, `mneme config`, error messages): every place a secret can
// sit is masked. node-postgres also takes the password as a query parameter (`?password=…`, and
// `sslpassword` for the client key), and an endpoint URL may carry a key or token the same way,
// so masking the user-info part alone would print them.

const SECRET_PARAM = /pass|key|token|secret|sig|auth/i;

/** The URL with its passwords and keys masked as `***`; text that is not a URL is not shown. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const name of [...u.searchParams.keys()])
      if (SECRET_PARAM.test(name)) u.searchParams.set(name, '***');
    return u.toString();
  } catch {
    return '(a URL that does not parse; not shown)';
  }
}

/** Whether a setting's text is a URL (shown only through redactUrl). */
export const looksLikeUrl = (v: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(v.trim());

/** Whether a URL carries a password or key redactUrl would mask (or does not parse at all). */
export function urlHasSecret(url: string): boolean {
  try {
    const u = new URL(url);
    return u.password !== '' || [...u.searchParams.keys()].some((n) => SECRET_PARAM.test(n));
  } catch {
    return true;
  }
}
