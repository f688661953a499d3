// Content script: reads the page's signals and hands them to the background worker, which holds
// the credentials and does the network call.
(() => {
  const meta = (selector) => document.querySelector(selector)?.getAttribute('content') ?? undefined;
  const texts = (selector) => [...document.querySelectorAll(selector)].map((el) => el.textContent.trim()).filter(Boolean);
  const title = document.title;
  const description = meta('meta[name="description"]');
  const canonical = document.querySelector('link[rel="canonical"]')?.href;
  const robots = meta('meta[name="robots"]');
  const openGraph = Object.fromEntries([...document.querySelectorAll('meta[property^="og:"]')].map((el) => [el.getAttribute('property'), el.getAttribute('content') ?? '']));
  const jsonLd = [...document.querySelectorAll('script[type="application/ld+json"]')].flatMap((el) => {
    try {
      return [JSON.parse(el.textContent)];
    } catch {
      return [];
    }
  });
  const h1 = texts('h1');
  const signals = {
    title: { value: title, length: title.length },
    ...(description !== undefined && { description: { value: description, length: description.length } }),
    ...(canonical && { canonical: { value: canonical } }),
    ...(robots !== undefined && { robots }),
    ...(document.documentElement.lang && { lang: document.documentElement.lang }),
    headings: { h1, h2: texts('h2') },
    openGraph,
    jsonLd,
  };
  const scan = {
    hostname: location.hostname,
    url: location.origin + location.pathname,
    scannedAt: new Date().toISOString(),
    signals,
    signalPresence: {
      title: title !== '',
      description: !!description,
      jsonLd: jsonLd.length > 0,
      openGraph: Object.keys(openGraph).length > 0,
      h1: h1.length > 0,
      canonical: !!canonical,
      robots: robots !== undefined,
    },
  };
  chrome.runtime.sendMessage({ type: 'svc-scan', scan }).then((result) => {
    if (result?.ok) console.info('svc probe: scan sent');
    else console.warn(`svc probe: scan not sent: ${result?.error}: ${result?.detail}`);
  });
})();
