/** Time-ordered unique ids (UUIDv7): sortable by creation, safe to expose. */
export function newId(): string {
  return Bun.randomUUIDv7();
}
