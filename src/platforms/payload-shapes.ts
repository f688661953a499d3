// What each topic's body looks like, for the checks that refuse a signed body under a topic it was
// not made for (the platforms sign the body, never the topic header beside it).

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A delete body names just the entity: `{"id": <n>}` and nothing else (platform A's products/delete,
 * platform C's product.deleted). One without the id is the topic's own but malformed (a 400).
 */
export const isIdOnly = (payload: Record<string, unknown>): boolean => Object.keys(payload).every((key) => key === 'id');
