import { render } from 'preact';
render(<p>console</p>, document.getElementById('app')!);
