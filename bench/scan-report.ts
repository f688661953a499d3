/** A realistic 1.5–3 KB scan report, as the browser extension sends it (ASCII only, so it embeds in Lua as is). */
export function scanReport(i: number, scannedAt: string) {
  return {
    url: `https://shop-${i % 16}.example.com/products/organic-green-tea-${i}`,
    hostname: `shop-${i % 16}.example.com`,
    scannedAt,
    platform: { platform: 'platform-a', confidence: 0.94 },
    pageType: 'product',
    svc: { detected: i % 3 === 0, version: '1.4.2' },
    signals: {
      title: { value: 'Organic Green Tea - Loose Leaf, 100 g | Example Tea Shop', length: 56 },
      description: { value: 'Hand-picked organic green tea from small farms. Fresh, grassy and sweet, with free shipping over 40 EUR and a 30-day return policy.', length: 131 },
      canonical: { value: `https://shop-${i % 16}.example.com/products/organic-green-tea-${i}` },
      robots: 'index,follow,max-image-preview:large',
      lang: 'en',
      headings: { h1: ['Organic Green Tea'], h2: ['Description', 'Brewing guide', 'Reviews', 'You may also like'] },
      openGraph: { 'og:title': 'Organic Green Tea', 'og:type': 'product', 'og:image': 'https://cdn.example.com/img/green-tea-1200.jpg', 'og:price:amount': '12.90', 'og:price:currency': 'EUR' },
      jsonLd: [
        { '@context': 'https://schema.org', '@type': 'Product', name: 'Organic Green Tea', sku: `GT-${1000 + i}`, brand: { '@type': 'Brand', name: 'Example Tea' },
          offers: { '@type': 'Offer', price: '12.90', priceCurrency: 'EUR', availability: 'https://schema.org/InStock' },
          aggregateRating: { '@type': 'AggregateRating', ratingValue: '4.7', reviewCount: '213' } },
        { '@context': 'https://schema.org', '@type': 'BreadcrumbList', itemListElement: [
          { '@type': 'ListItem', position: 1, name: 'Tea', item: 'https://shop.example.com/collections/tea' },
          { '@type': 'ListItem', position: 2, name: 'Green tea', item: 'https://shop.example.com/collections/green-tea' } ] },
      ],
    },
    signalPresence: { title: true, description: true, jsonLd: true, openGraph: true, h1: true, canonical: true, robots: true },
    quality: { grade: 'B', percentage: 82, title: 9, description: 8, keywords: 5, jsonLd: 9, openGraph: 8 },
    vertical: 'food-and-drink',
    extensionVersion: '3.8.1',
    timings: { extractMs: 41, totalMs: 63 },
  };
}
