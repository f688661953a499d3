import { verdana11Width } from './verdana.ts';

/** Shields' named colours: the current palette of badge-maker 6. */
const COLORS = {
  brightgreen: '#4b0',
  green: '#67ac09',
  yellowgreen: '#95991a',
  yellow: '#d8b800',
  red: '#dd4343',
  lightgrey: '#939393',
} as const;
export type BadgeColor = keyof typeof COLORS;

const GRADE_COLORS: Record<string, BadgeColor> = { A: 'brightgreen', B: 'green', C: 'yellowgreen', D: 'yellow', E: 'red', F: 'red' };

export const BADGE_LABEL = 'AI readiness';

/** What a badge says: the shields endpoint schema fields. */
export interface Badge {
  label: string;
  message: string;
  color: BadgeColor;
}

/** The badge of a hostname's latest scan, or the grey "not scanned" one. */
export function badgeFor(latest: { grade: string; percentage: number } | null): Badge {
  if (!latest) return { label: BADGE_LABEL, message: 'not scanned', color: 'lightgrey' };
  return { label: BADGE_LABEL, message: `${latest.grade} ${Math.round(latest.percentage)}%`, color: GRADE_COLORS[latest.grade] ?? 'lightgrey' };
}

/** The shields endpoint schema (`format=json`), for shields' own dynamic badges. */
export const badgeJson = (badge: Badge) => ({ schemaVersion: 1, label: badge.label, message: badge.message, color: badge.color });

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const escapeXml = (text: string) => text.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);

/** badge-maker's text width: whole pixels, rounded up to odd for pixel-grid alignment. */
function textWidth(text: string): number {
  const width = Math.floor(verdana11Width(text));
  return width % 2 === 0 ? width + 1 : width;
}

const PADDING = 5;

/** One text run with its drop shadow, drawn at 10x and scaled down (as shields does for sub-pixel placement). */
function text(content: string, left: number, width: number): string {
  const x = 10 * (left + 0.5 * width + PADDING);
  const attrs = `x="${x}" transform="scale(.1)" textLength="${10 * width}"`;
  const escaped = escapeXml(content);
  return `<text aria-hidden="true" ${attrs} y="150" fill="#010101" fill-opacity=".3">${escaped}</text><text ${attrs} y="140" fill="#fff">${escaped}</text>`;
}

/** The shields "flat" style badge: 20 px high, label on #555, message on the grade's colour. */
export function badgeSvg(badge: Badge): string {
  const labelText = textWidth(badge.label);
  const messageText = textWidth(badge.message);
  const left = labelText + 2 * PADDING;
  const right = messageText + 2 * PADDING;
  const width = left + right;
  const title = escapeXml(`${badge.label}: ${badge.message}`);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20" role="img" aria-label="${title}"><title>${title}</title>` +
    '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>' +
    `<clipPath id="r"><rect width="${width}" height="20" rx="3" fill="#fff"/></clipPath>` +
    `<g clip-path="url(#r)"><rect width="${left}" height="20" fill="#555"/><rect x="${left}" width="${right}" height="20" fill="${COLORS[badge.color]}"/><rect width="${width}" height="20" fill="url(#s)"/></g>` +
    '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" text-rendering="geometricPrecision" font-size="110">' +
    text(badge.label, 1, labelText) +
    text(badge.message, left - 1, messageText) +
    '</g></svg>'
  );
}
