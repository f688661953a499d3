import { escapeAttribute } from './html.ts';

/** Markup that is already safe: produced by `html` below, never by string concatenation of input. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeAttribute(String(value));
}

/** Tagged template for server-rendered pages: every interpolated value is escaped unless it is SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

/** Fill a bundled page template's `%NAME%` placeholders: strings escaped, SafeHtml as it is. */
export function fillTemplate(template: string, values: Record<string, string | SafeHtml>): string {
  return template.replace(/%([A-Z]+)%/g, (whole, name: string) => (name in values ? render(values[name]) : whole));
}
