// One definition for the widget (browser bundle, which only sees widget/) and the server.
export { serializeJsonLd } from '../../widget/jsonld.ts';
