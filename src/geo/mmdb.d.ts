// `import path from './x.mmdb' with { type: 'file' }` yields a path (embedded in the compiled binary).
declare module '*.mmdb' {
  const path: string;
  export default path;
}
