import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { checkGtin, gtinProperty } from '../src/lib/gtin.ts';
import { fixedClock } from '../src/lib/clock.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { enrich, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';
import { getProduct } from './helpers/stores.ts';

describe('the GTIN rule: digits only, 8/12/13/14 long, valid check digit', () => {
  test('valid GTIN-8, -12, -13 and -14 are published under their own property', () => {
    expect(gtinProperty('96385074')).toEqual({ gtin8: '96385074' });
    expect(gtinProperty('036000291452')).toEqual({ gtin12: '036000291452' });
    expect(gtinProperty('4006381333931')).toEqual({ gtin13: '4006381333931' });
    expect(gtinProperty('10614141000019')).toEqual({ gtin14: '10614141000019' });
  });

  test('separators are normalised away: spaces and hyphens as printed under a barcode', () => {
    expect(checkGtin('0-36000-29145-2')).toEqual({ valid: true, gtin: '036000291452', property: 'gtin12' });
    expect(checkGtin(' 4 006381 333931 ')).toEqual({ valid: true, gtin: '4006381333931', property: 'gtin13' });
  });

  const INVALID: [string, string, string][] = [
    ['a wrong check digit', '4006381333930', 'invalid_check_digit'],
    ['a wrong check digit behind separators', '0-36000-29145-3', 'invalid_check_digit'],
    ['markup', '<b>4006381333931</b>', 'invalid_characters'],
    ['letters', 'ABC-4006381333931', 'invalid_characters'],
    ['other separators', '4006381.333931', 'invalid_characters'],
    ['a wrong length', '40063813339', 'invalid_length'],
    ['a wrong length after removing separators', '400-638-133-39', 'invalid_length'],
    ['all zeros', '00000000', 'invalid_length'],
    ['nothing', '', 'invalid_characters'],
  ];
  for (const [kind, barcode, reason] of INVALID) {
    test(`${kind} (${JSON.stringify(barcode)}) is not a GTIN: ${reason}`, () => {
      const check = checkGtin(barcode);
      expect(check).toMatchObject({ valid: false, reason });
      expect(gtinProperty(barcode)).toEqual({});
    });
  }
});

describe('invalid barcodes are never published and are reported on the product', () => {
  const SHOP = 'acme.myplatform-a.com';
  let t: TestApp;
  beforeEach(async () => {
    t = await makeTestApp({ clock: fixedClock(Date.parse('2026-02-01T12:00:00Z')), env: { SVC_BASE_URL: 'https://svc.example' } });
  });
  afterEach(() => t.close());

  const BAD = ['4006381333930', '<b>4006381333948</b>', '40063813339'];

  async function productWithBadBarcodes(): Promise<string> {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    const data = realisticProduct('platform-a', 101, SHOP);
    await syncProduct(t, storeId, { ...data, barcode: 'n/a', variants: data.variants.map((v, i) => ({ ...v, barcode: BAD[i]! })) });
    await enrich(t, storeId, '101');
    return storeId;
  }

  test('no format carries an invalid barcode, under gtin or any other name', async () => {
    await productWithBadBarcodes();
    for (const ext of ['jsonld', 'llm', 'md', 'meta']) {
      const body = await (await t.request(`/api/v1/platform-a/products/101.${ext}`)).text();
      for (const bad of ['4006381333930', '4006381333948', '40063813339', 'n/a']) expect(body).not.toContain(bad);
      expect(body).not.toMatch(/"gtin(8|12|13|14)?":"[^"]/);
    }
    const group = JSON.parse(await (await t.request('/api/v1/platform-a/products/101.jsonld')).text())['@graph'][0];
    for (const variant of group.hasVariant) expect(Object.keys(variant).filter((k) => k.startsWith('gtin'))).toEqual([]);
  });

  test('a valid barcode next to invalid ones is still published', async () => {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    const data = realisticProduct('platform-a', 102, SHOP);
    await syncProduct(t, storeId, { ...data, variants: data.variants.map((v, i) => (i === 0 ? { ...v, barcode: '0-36000-29145-2' } : { ...v, barcode: BAD[i]! })) });
    await enrich(t, storeId, '102');
    const group = JSON.parse(await (await t.request('/api/v1/platform-a/products/102.jsonld')).text())['@graph'][0];
    expect(group.hasVariant.map((v: any) => v.gtin12 ?? v.gtin13 ?? null)).toEqual(['036000291452', null, null]);
  });

  test('the admin catalogue API reports each invalid barcode as a warning, with the field, value and reason', async () => {
    const storeId = await productWithBadBarcodes();
    const { body } = await getProduct(t, storeId, '101');
    expect(body.gtin).toBeNull();
    expect(body.variants.map((v: any) => [v.barcode, v.gtin])).toEqual(BAD.map((b) => [b, null]));
    expect(body.warnings).toEqual([
      { code: 'invalid_gtin', field: 'barcode', variantId: null, value: 'n/a', reason: 'invalid_characters', detail: expect.stringContaining('digits only') },
      { code: 'invalid_gtin', field: 'variants[1010].barcode', variantId: '1010', value: '4006381333930', reason: 'invalid_check_digit', detail: expect.stringContaining('check digit is 0, expected 1') },
      { code: 'invalid_gtin', field: 'variants[1011].barcode', variantId: '1011', value: '<b>4006381333948</b>', reason: 'invalid_characters', detail: expect.any(String) },
      { code: 'invalid_gtin', field: 'variants[1012].barcode', variantId: '1012', value: '40063813339', reason: 'invalid_length', detail: expect.stringContaining('11 digits') },
    ]);
    const list = await t.request(`/api/v1/admin/stores/${storeId}/products`, { headers: { authorization: `Bearer ${await t.keyWith('admin')}` } });
    expect((await list.json()).items[0].warnings).toHaveLength(4);
  });
});
