// `import path from 'x' with { type: 'file' }` yields a path (embedded in the compiled binary).
declare module 'swagger-ui-dist/*' {
  const path: string;
  export default path;
}
declare module '*/reference.js' {
  const path: string;
  export default path;
}
declare module '*/reference.css' {
  const path: string;
  export default path;
}
