/** The widget's one global namespace; a second copy of the script sees it and stays idle. */
interface SvcNamespace {
  started: boolean;
}

export function start(): void {
  const scope = window as unknown as { Svc?: SvcNamespace };
  if (scope.Svc?.started) return;
  scope.Svc = { started: true };
}
