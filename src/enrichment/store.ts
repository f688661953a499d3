import { eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { productEnrichments, type ProductEnrichmentRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import { htmlToLine } from '../lib/html.ts';

export interface EnrichmentInput {
  summary: string;
  highlights: string[];
  attributes: Record<string, string>;
}

export interface EnrichmentView extends EnrichmentInput {
  productId: string;
  createdAt: string;
  updatedAt: string;
}

export function toEnrichmentView(productId: string, row: ProductEnrichmentRow): EnrichmentView {
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

/** Enrichment records, keyed by the catalogue row (`products.id`). */
export function createEnrichmentStore(db: Db, clock: Clock) {
  const get = (productRowId: string) => db.select().from(productEnrichments).where(eq(productEnrichments.productRowId, productRowId)).get() ?? null;
  return {
    get,
    put(storeId: string, productRowId: string, input: EnrichmentInput): ProductEnrichmentRow {
      const values = clean(input);
      const now = clock.now();
      return db
        .insert(productEnrichments)
        .values({ productRowId, storeId, ...values, createdAt: now, updatedAt: now })
        // updated_at moves forward by at least 1 ms per write: it is part of the signals' version stamp.
        .onConflictDoUpdate({ target: productEnrichments.productRowId, set: { ...values, updatedAt: sql`max(${now}, ${productEnrichments.updatedAt} + 1)` } })
        .returning()
        .get();
    },
    /** When each of these catalogue rows was last enriched (rows without enrichment are absent). */
    enrichedAt(productRowIds: string[]): Map<string, number> {
      if (productRowIds.length === 0) return new Map();
      const rows = db
        .select({ id: productEnrichments.productRowId, at: productEnrichments.updatedAt })
        .from(productEnrichments)
        .where(inArray(productEnrichments.productRowId, productRowIds))
        .all();
      return new Map(rows.map((row) => [row.id, row.at]));
    },
    remove(productRowId: string): boolean {
      return db.delete(productEnrichments).where(eq(productEnrichments.productRowId, productRowId)).returning({ id: productEnrichments.productRowId }).all().length > 0;
    },
  };
}

export type EnrichmentStore = ReturnType<typeof createEnrichmentStore>;
