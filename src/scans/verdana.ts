/**
 * Advance widths in pixels of printable ASCII (U+0020–U+007E) in 11px Verdana, the table shields'
 * badge-maker measures badge text with (from the MIT-licensed `anafanafo` package,
 * data/verdana-11px-normal.json). Other characters count as wide as `m`, as badge-maker's guess does.
 */
const ASCII_WIDTHS = [
  3.87, 4.33, 5.05, 9, 6.99, 11.84, 7.99, 2.95, 5, 5, 6.99, 9, 4, 5, 4, 5, 6.99, 6.99, 6.99, 6.99, 6.99, 6.99, 6.99, 6.99,
  6.99, 6.99, 5, 5, 9, 9, 9, 6, 11, 7.52, 7.54, 7.68, 8.48, 6.96, 6.32, 8.53, 8.27, 4.63, 5, 7.62, 6.12, 9.27, 8.23, 8.66,
  6.63, 8.66, 7.65, 7.52, 6.78, 8.05, 7.52, 10.88, 7.54, 6.77, 7.54, 5, 5, 5, 9, 6.99, 6.99, 6.61, 6.85, 5.73, 6.85, 6.55,
  3.87, 6.85, 6.96, 3.02, 3.79, 6.51, 3.02, 10.7, 6.96, 6.68, 6.85, 6.85, 4.69, 5.73, 4.33, 6.96, 6.51, 9, 6.51, 6.51, 5.78,
  6.98, 5, 6.98, 9,
];
const WIDTH_OF_M = 10.7;

/** Width of `text` set in 11px Verdana, in pixels. */
export function verdana11Width(text: string): number {
  let width = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    width += code >= 0x20 && code <= 0x7e ? ASCII_WIDTHS[code - 0x20]! : WIDTH_OF_M;
  }
  return width;
}
