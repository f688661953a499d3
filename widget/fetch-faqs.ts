import type { EntityContext, FaqEntry } from './context.ts';

export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

export type FaqResult = { ok: true; entries: FaqEntry[] } | { ok: false; problem: string };

const isEntry = (v: unknown): v is FaqEntry =>
  typeof v === 'object' && v !== null && typeof (v as FaqEntry).question === 'string' && typeof (v as FaqEntry).answer === 'string';

/** GET the approved FAQs of one entity from the public FAQ endpoint of the server at `origin`. */
export async function fetchFaqs(fetchImpl: Fetch, origin: string, apiKey: string, context: EntityContext): Promise<FaqResult> {
  const url = `${origin}/api/v1/public/faqs?type=${encodeURIComponent(context.type)}&ref=${encodeURIComponent(context.id)}`;
  const what = `${context.type}/${context.id}`;
  let response: Response;
  try {
    response = await fetchImpl(url, { headers: { 'X-Api-Key': apiKey }, credentials: 'omit' });
  } catch (error) {
    // Browsers report a CORS refusal (the page's origin is not allowed for this key) as a network error.
    return { ok: false, problem: `FAQ request for ${what} failed (${(error as Error).message}): a network error, or this site's domain is not in the key's allowedDomains` };
  }
  if (response.status === 403) {
    return { ok: false, problem: `FAQ request for ${what} was refused (403): check data-api-key and that this site's domain is in the key's allowedDomains` };
  }
  if (!response.ok) return { ok: false, problem: `FAQ request for ${what} failed with HTTP ${response.status}` };
  try {
    const body = (await response.json()) as { items?: unknown };
    const items = Array.isArray(body.items) ? body.items.filter(isEntry) : [];
    return { ok: true, entries: items };
  } catch {
    return { ok: false, problem: `FAQ response for ${what} was not valid JSON` };
  }
}
