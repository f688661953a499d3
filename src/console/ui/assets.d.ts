// Stylesheets imported for their side effect are bundled by Bun into the page's CSS.
declare module '*.css';
