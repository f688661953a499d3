import { render } from 'preact';
import { App } from './app.tsx';

const root = document.getElementById('app')!;
render(<App siteName={root.dataset.siteName ?? 'svc'} baseUrl={root.dataset.baseUrl ?? location.origin} />, root);
