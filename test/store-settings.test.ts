import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { fixedClock } from '../src/lib/clock.ts';
import { bearer, jsonRequest, makeTestApp, tempDir, type TestApp } from './helpers/app.ts';
import { runCli } from './helpers/cli.ts';
import { enrich, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';

const SHOP = 'acme.myplatform-a.com';
const SETTINGS = {
  itemCondition: 'new',
  returnPolicy: { countries: ['US', 'ca'], window: 'finite', days: 30, fees: 'shipping_fee', shippingFee: '4.95', method: 'mail' },
  shipping: [
    { countries: ['US'], price: '0.00', handlingDays: { min: 0, max: 1 }, transitDays: { min: 2, max: 5 } },
    { countries: ['CA', 'MX'], price: '12.50', handlingDays: { min: 1, max: 2 }, transitDays: { min: 4, max: 9 } },
  ],
};
/** As stored and shown: country codes upper-cased. */
const STORED = { ...SETTINGS, returnPolicy: { ...SETTINGS.returnPolicy, countries: ['US', 'CA'] } };

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp({ clock: fixedClock(Date.parse('2026-02-01T12:00:00Z')), env: { SVC_BASE_URL: 'https://svc.example' } });
});
afterEach(() => t.close());

const settingsUrl = (id: string) => `/api/v1/admin/stores/${id}/settings`;
const put = async (id: string, body: unknown) => t.request(settingsUrl(id), jsonRequest('PUT', body, bearer(await t.keyWith('admin'))));

describe('store settings through the admin API', () => {
  test('PUT replaces the settings, GET and the store record show them; {} clears them', async () => {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    expect(await (await t.request(settingsUrl(storeId), { headers: bearer(await t.keyWith('admin')) })).json()).toEqual({});
    const res = await put(storeId, SETTINGS);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(STORED);
    expect(await (await t.request(settingsUrl(storeId), { headers: bearer(await t.keyWith('admin')) })).json()).toEqual(STORED);
    expect((await (await t.request(`/api/v1/admin/stores/${storeId}`, { headers: bearer(await t.keyWith('admin')) })).json()).settings).toEqual(STORED);
    expect(await (await put(storeId, {})).json()).toEqual({});
  });

  const INVALID: [string, unknown, string][] = [
    ['an unknown item condition', { itemCondition: 'mint' }, 'itemCondition: expected one of new, used, refurbished, damaged'],
    ['an unknown field', { shippingDays: 3 }, 'settings: unknown field "shippingDays"'],
    ['a finite window without days', { returnPolicy: { ...SETTINGS.returnPolicy, days: undefined } }, 'returnPolicy.days:'],
    ['a return window over ten years', { returnPolicy: { ...SETTINGS.returnPolicy, days: 3651 } }, 'returnPolicy.days: expected a whole number of days from 1 to 3650'],
    ['a finite window of 0 days', { returnPolicy: { ...SETTINGS.returnPolicy, days: 0 } }, 'returnPolicy.days: a finite return window has at least 1 day'],
    ['days with an unlimited window', { returnPolicy: { ...SETTINGS.returnPolicy, window: 'unlimited' } }, 'returnPolicy.days: only allowed with window "finite"'],
    ['a shipping fee without the shipping_fee kind', { returnPolicy: { ...SETTINGS.returnPolicy, fees: 'free' } }, 'returnPolicy.shippingFee: only allowed with fees "shipping_fee"'],
    ['fees when returns are not permitted', { returnPolicy: { countries: ['US'], window: 'not_permitted', fees: 'free' } }, 'returnPolicy.fees: not allowed when returns are not permitted'],
    ['a country that is not ISO 3166-1', { returnPolicy: { ...SETTINGS.returnPolicy, countries: ['US', 'UK'] } }, 'returnPolicy.countries[1]: "UK" is not an ISO 3166-1 alpha-2 country code'],
    ['no countries', { shipping: [{ ...SETTINGS.shipping[0], countries: [] }] }, 'shipping[0].countries:'],
    ['a price as a number', { shipping: [{ ...SETTINGS.shipping[0], price: 4.95 }] }, 'shipping[0].price: expected a decimal amount as a string'],
    ['a day range the wrong way round', { shipping: [{ ...SETTINGS.shipping[0], transitDays: { min: 5, max: 2 } }] }, 'shipping[0].transitDays: min must not exceed max'],
    ['fractional days', { shipping: [{ ...SETTINGS.shipping[0], handlingDays: { min: 0.5, max: 1 } }] }, 'shipping[0].handlingDays.min:'],
    ['a list instead of an object', [], 'settings: must be an object'],
  ];
  for (const [what, body, detail] of INVALID) {
    test(`400 invalid_settings for ${what}, and nothing changes`, async () => {
      const storeId = await seedStore(t, 'platform-a', SHOP);
      await put(storeId, SETTINGS);
      const res = await put(storeId, body);
      expect(res.status).toBe(400);
      const error = await res.json();
      expect(error.error).toBe('invalid_settings');
      expect(error.detail.startsWith(detail)).toBe(true);
      expect(await (await t.request(settingsUrl(storeId), { headers: bearer(await t.keyWith('admin')) })).json()).toEqual(STORED);
    });
  }

  test('404 for an unknown store; the admin scope is required', async () => {
    expect((await put('nope', SETTINGS)).status).toBe(404);
    const storeId = await seedStore(t, 'platform-a', SHOP);
    expect((await t.request(settingsUrl(storeId), jsonRequest('PUT', SETTINGS, bearer(await t.keyWith('dashboard:read'))))).status).toBe(403);
    expect((await t.request(settingsUrl(storeId), jsonRequest('PUT', SETTINGS))).status).toBe(401);
  });
});

describe('store settings reach every offer', () => {
  const offersOf = (doc: any): any[] => {
    const node = doc['@graph'][0];
    return node.hasVariant ? node.hasVariant.map((v: any) => v.offers) : [node.offers];
  };

  for (const kind of ['multi', 'single'] as const) {
    test(`${kind}-variant product: itemCondition, shippingDetails and hasMerchantReturnPolicy on every Offer`, async () => {
      const storeId = await seedStore(t, 'platform-a', SHOP);
      await syncProduct(t, storeId, realisticProduct('platform-a', 101, SHOP, kind));
      await enrich(t, storeId, '101');
      const before = await t.request('/api/v1/platform-a/products/101.jsonld');
      for (const offer of offersOf(JSON.parse(await before.text()))) {
        expect(offer.itemCondition).toBeUndefined();
        expect(offer.shippingDetails).toBeUndefined();
        expect(offer.hasMerchantReturnPolicy).toBeUndefined();
      }
      await put(storeId, SETTINGS);
      const after = await t.request('/api/v1/platform-a/products/101.jsonld');
      expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
      const offers = offersOf(JSON.parse(await after.text()));
      expect(offers).toHaveLength(kind === 'multi' ? 3 : 1);
      for (const offer of offers) {
        expect(offer.itemCondition).toBe('https://schema.org/NewCondition');
        expect(offer.shippingDetails).toEqual([
          {
            '@type': 'OfferShippingDetails',
            shippingRate: { '@type': 'MonetaryAmount', value: 0, currency: 'USD' },
            shippingDestination: [{ '@type': 'DefinedRegion', addressCountry: 'US' }],
            deliveryTime: {
              '@type': 'ShippingDeliveryTime',
              handlingTime: { '@type': 'QuantitativeValue', minValue: 0, maxValue: 1, unitCode: 'DAY' },
              transitTime: { '@type': 'QuantitativeValue', minValue: 2, maxValue: 5, unitCode: 'DAY' },
            },
          },
          {
            '@type': 'OfferShippingDetails',
            shippingRate: { '@type': 'MonetaryAmount', value: 12.5, currency: 'USD' },
            shippingDestination: [{ '@type': 'DefinedRegion', addressCountry: 'CA' }, { '@type': 'DefinedRegion', addressCountry: 'MX' }],
            deliveryTime: {
              '@type': 'ShippingDeliveryTime',
              handlingTime: { '@type': 'QuantitativeValue', minValue: 1, maxValue: 2, unitCode: 'DAY' },
              transitTime: { '@type': 'QuantitativeValue', minValue: 4, maxValue: 9, unitCode: 'DAY' },
            },
          },
        ]);
        expect(offer.hasMerchantReturnPolicy).toEqual({
          '@type': 'MerchantReturnPolicy',
          applicableCountry: ['US', 'CA'],
          returnPolicyCategory: 'https://schema.org/MerchantReturnFiniteReturnWindow',
          merchantReturnDays: 30,
          returnMethod: 'https://schema.org/ReturnByMail',
          returnFees: 'https://schema.org/ReturnShippingFees',
          returnShippingFeesAmount: { '@type': 'MonetaryAmount', value: 4.95, currency: 'USD' },
        });
      }
    });
  }

  test('returns not permitted: the policy says so and carries no window, fees or method', async () => {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    await syncProduct(t, storeId, realisticProduct('platform-a', 101, SHOP, 'single'));
    await enrich(t, storeId, '101');
    await put(storeId, { returnPolicy: { countries: ['DE'], window: 'not_permitted' } });
    const offer = JSON.parse(await (await t.request('/api/v1/platform-a/products/101.jsonld')).text())['@graph'][0].offers;
    expect(offer.hasMerchantReturnPolicy).toEqual({ '@type': 'MerchantReturnPolicy', applicableCountry: 'DE', returnPolicyCategory: 'https://schema.org/MerchantReturnNotPermitted' });
  });

  test('.md has a shipping and returns section and .llm the terms', async () => {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    await syncProduct(t, storeId, realisticProduct('platform-a', 101, SHOP));
    await enrich(t, storeId, '101');
    await put(storeId, SETTINGS);
    const md = await (await t.request('/api/v1/platform-a/products/101.md')).text();
    expect(md).toContain(
      '## Shipping and returns\n\n' +
        '- Shipping to US: free, handled in 0–1 days, delivered in 2–5 days\n' +
        '- Shipping to CA, MX: 12.50 USD, handled in 1–2 days, delivered in 4–9 days\n' +
        '- Returns: within 30 days, by mail, for a return shipping fee of 4.95 USD (US, CA)\n' +
        '- Condition: new\n',
    );
    expect((await (await t.request('/api/v1/platform-a/products/101.llm')).json()).terms).toEqual({ itemCondition: 'new', returnPolicy: STORED.returnPolicy, shipping: STORED.shipping });
  });
});

describe('store settings from the CLI', () => {
  test('svc stores settings set and get: the same document and validation as the admin API', async () => {
    const data = tempDir();
    try {
      const cli = (...args: string[]) => runCli([...args, '--data-dir', data.dir]);
      const local = await makeTestApp({ dataDir: data.dir });
      const storeId = await seedStore(local, 'platform-b', 'abc123');
      await local.close();
      const set = await cli('stores', 'settings', 'set', storeId, '--json', JSON.stringify(SETTINGS));
      expect(set.code).toBe(0);
      expect(set.json).toEqual({ id: storeId, settings: STORED });
      expect((await cli('stores', 'settings', 'get', storeId)).json).toEqual({ id: storeId, settings: STORED });
      const bad = await cli('stores', 'settings', 'set', storeId, '--json', '{"itemCondition":"mint"}');
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('invalid_settings: itemCondition');
      expect((await cli('stores', 'settings', 'set', storeId, '--json', '{not json')).code).toBe(2);
      expect((await cli('stores', 'settings', 'get', 'no-such-store')).code).toBe(1);
      expect((await cli('stores', 'settings', 'get', storeId)).json.settings).toEqual(STORED);
    } finally {
      data.remove();
    }
  });
});
