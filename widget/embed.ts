// The embeddable FAQ widget, bundled at server start (src/widget/bundle.ts) into a minified IIFE
// served at /embed.js. No runtime dependencies; sources import each other with explicit `.ts`
// extensions (required when bundling from in-memory files). Nothing here may throw into the page.
import { start } from './start.ts';

try {
  start();
} catch {
  // A broken host environment must never break the storefront.
}
