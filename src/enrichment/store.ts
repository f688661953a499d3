import type { EnrichmentRecords } from '../storage/content.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import { htmlToLine } from '../lib/html.ts';

export interface EnrichmentInput {
  summary: string;
  highlights: string[];
  attributes: Record<string, string>;
}

/** Merchant enrichment of one catalogue row, as stored (plain text, cleaned on input); times in epoch ms. */
export interface Enrichment extends EnrichmentInput {
  /** The catalogue row (`ProductRecord.id`), so enrichment survives a remove/restore of the product. */
  productRowId: string;
  storeId: string;
  createdAt: number;
  updatedAt: number;
}

export interface EnrichmentView extends EnrichmentInput {
  productId: string;
  createdAt: string;
  updatedAt: string;
}

export function toEnrichmentView(productId: string, row: Enrichment): EnrichmentView {
  return {
    productId,
    summary: row.summary,
    highlights: row.highlights,
    attributes: row.attributes,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

/** Plain text only: tags stripped, control characters removed, whitespace collapsed (empty entries dropped). */
function clean(input: EnrichmentInput): EnrichmentInput {
  const summary = htmlToLine(input.summary);
  if (!summary) throw new ApiError(400, 'invalid_request', 'summary: must contain text');
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.attributes)) {
    const cleanName = htmlToLine(name);
    const cleanValue = htmlToLine(value);
    if (cleanName && cleanValue) attributes[cleanName] = cleanValue;
  }
  return { summary, highlights: input.highlights.map(htmlToLine).filter((h) => h.length > 0), attributes };
}

/** Enrichment, keyed by the catalogue row (`ProductRecord.id`); input cleaned here. */
export function createEnrichmentStore(records: EnrichmentRecords, clock: Clock) {
  return {
    get: (productRowId: string) => records.byProductRow(productRowId),
    async put(storeId: string, productRowId: string, input: EnrichmentInput): Promise<Enrichment> {
      return records.put(storeId, productRowId, clean(input), clock.now());
    },
    /** When each of these catalogue rows was last enriched (rows without enrichment are absent). */
    enrichedAt: (productRowIds: string[]) => records.enrichedAt(productRowIds),
    remove: (productRowId: string) => records.remove(productRowId),
  };
}

export type EnrichmentStore = ReturnType<typeof createEnrichmentStore>;
