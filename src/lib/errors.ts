/** The one error shape of every endpoint: `{ "error": "<machine_code>", "detail": "<human sentence>" }`. */
export interface ErrorBody {
  error: string;
  detail: string;
  [extra: string]: unknown;
}

/** Thrown anywhere below a route; the app's error hook turns it into the JSON error response. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }

  toResponse(): Response {
    return errorResponse(this.status, this.code, this.detail, this.headers, this.extra);
  }
}

/**
 * Carries an error response's code to the request log (src/observability/requests.ts), which reads
 * and removes it before the response leaves: clients never see it.
 */
export const ERROR_CODE_HEADER = 'x-svc-error-code';

export function errorResponse(
  status: number,
  code: string,
  detail: string,
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Response {
  const body: ErrorBody = { error: code, detail, ...extra };
  return Response.json(body, { status, headers: { ...headers, [ERROR_CODE_HEADER]: code } });
}

/** `value`, or a 404 `not_found` naming what was looked for. */
export function orNotFound<T>(value: T | null, what: string, id: string): T {
  if (value === null) throw new ApiError(404, 'not_found', `no ${what} with id ${JSON.stringify(id)}`);
  return value;
}
