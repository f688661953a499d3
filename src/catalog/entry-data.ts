// The catalogue's other storefront entities (categories and content pages), the shape every platform
// adapter maps its list items into (src/platforms/) and the database schemas' catalog_entries table
// carries. The catalogue owns them; a leaf, so the schemas import it without a cycle.

/** The catalogue's other storefront entities, as the FAQ widget names them: categories (platform A's collections) and content pages. */
export const CATALOG_ENTRY_TYPES = ['category', 'page'] as const;
export type CatalogEntryType = (typeof CATALOG_ENTRY_TYPES)[number];

/**
 * A category (platform A: a collection) or content page, mapped from the platform's list item: the
 * fields the widget and the signals need to find and link it.
 */
export interface EntryData {
  /** The platform's id, as a string. */
  entryId: string;
  /** The handle or slug in its storefront URL. */
  handle: string | null;
  title: string;
  /** Absolute storefront URL, when known. */
  url: string | null;
  /** The platform's modification time (epoch ms); null where its API reports none. */
  updatedAt: number | null;
}
