// A database URL as mneme may show it (status, `mneme config`, error messages): every place a
// password can sit is masked. node-postgres also takes the password as a query parameter
// (`?password=…`, and `sslpassword` for the client key), so masking the user-info part alone
// would print it.

/** The URL with its passwords masked as `***`; text that is not a URL is not shown at all. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const name of [...u.searchParams.keys()])
      if (/pass/i.test(name)) u.searchParams.set(name, '***');
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}
