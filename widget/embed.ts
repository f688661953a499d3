// The embeddable FAQ widget. This file is bundled at server start (src/widget/bundle.ts) into a
// minified IIFE served at /embed.js. Widget sources have no runtime dependencies and import each
// other with explicit `.ts` extensions (a requirement of bundling from in-memory files).
import { start } from './start.ts';

start();
