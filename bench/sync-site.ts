// The platform-C site bench/sync.ts imports from, in a process of its own (as a platform is another
// machine: generating and serialising its pages must not count as svc's event-loop time). Serves N
// generated products, page by page, generated on request (no catalogue in memory); prints {"url"}.
//   npx bun bench/sync-site.ts N
import { platformCProduct } from '../test/fakes/payloads.ts';

const total = Number(process.argv[2]);
const site = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(request): Response {
    const url = new URL(request.url);
    // The site has no categories or pages: the bench measures the products phase.
    if (url.pathname.endsWith('/products/categories') || url.pathname.endsWith('/wp/v2/pages')) return Response.json([], { headers: { 'x-wp-total': '0', 'x-wp-totalpages': '1' } });
    if (!url.pathname.endsWith('/wp-json/wc/v3/products')) return Response.json({ code: 'rest_no_route' }, { status: 404 });
    const perPage = Number(url.searchParams.get('per_page'));
    const page = Number(url.searchParams.get('page'));
    const from = (page - 1) * perPage;
    const items: unknown[] = Array.from({ length: Math.max(0, Math.min(perPage, total - from)) }, (_, i) => ({ ...platformCProduct(100_000 + from + i, siteUrl, { name: `Product ${from + i}` }), slug: `product-${from + i}` }));
    return Response.json(items, { headers: { 'x-wp-total': String(total), 'x-wp-totalpages': String(Math.ceil(total / perPage)) } });
  },
});
const siteUrl = `http://127.0.0.1:${site.port}`;
console.log(JSON.stringify({ url: siteUrl }));
