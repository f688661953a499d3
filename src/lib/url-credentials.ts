/**
 * Service URLs that may carry a password (Redis, PostgreSQL): how they are shown, and how an error
 * about them is told, so the password never reaches a log line, an error or a metric.
 */

/** The URL as it may be shown (start line, logs): without its user name and password. */
export function urlShown(url: string): string {
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  return shown.href;
}

/** A percent-encoded URL part decoded, or as it is when it does not decode. */
function decodedOr(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * A function telling an error's message with `url`'s password cut out (as written in the URL and
 * decoded), should a client library's message ever carry it; at most 300 characters.
 */
export function passwordScrubber(url: string): (error: unknown) => string {
  const password = new URL(url).password;
  const secrets = [password, decodedOr(password)].filter((secret) => secret.length > 0);
  return (error) => secrets.reduce((text, secret) => text.split(secret).join('***'), String((error as Error)?.message ?? error)).slice(0, 300);
}
