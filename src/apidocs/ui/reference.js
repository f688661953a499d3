// Starts Swagger UI (served by svc itself, like this file) on svc's OpenAPI document. Loaded as a
// file, not inline, so the page runs under a CSP without 'unsafe-inline'.
window.addEventListener('DOMContentLoaded', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    // The default would load a badge from an outside validator; the page talks to this svc only.
    validatorUrl: null,
    // Never take a document URL or options from the page's query string.
    queryConfigEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    defaultModelsExpandDepth: 0,
    docExpansion: 'list',
  });
});
