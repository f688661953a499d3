/** What the widget found on the page: the entity whose FAQs it shows, and how it found it. */
export interface EntityContext {
  type: EntityType;
  id: string;
  /** Detection method label, shown in console messages (documented in README). */
  method: string;
}

export type EntityType = 'product' | 'category' | 'page';

export interface FaqEntry {
  id: string;
  question: string;
  /** Basic formatting only (paragraphs, lists, emphasis, http(s) links); sanitized again on render. */
  answer: string;
}
