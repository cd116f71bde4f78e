/**
 * Whether the operator passed a Node/V8 flag whose name holds `part` (on node's command line or in
 * NODE_OPTIONS): sluice then leaves that setting as they chose it.
 */
export function operatorSet(part: string): boolean {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => arg.includes(part));
}
