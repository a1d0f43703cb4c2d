// Types of workerd-serve.mjs.
export interface WorkerdServe {
  url: string;
  /** workerd's process id (its CPU time, for the benchmarks). */
  pid: number | undefined;
  close(): Promise<void>;
}

export function startWorkerdServe(bindings: Record<string, string>, wrap?: string[]): Promise<WorkerdServe>;

export function startWorkerdLike(env: Record<string, string | undefined>, wrap?: string[]): Promise<WorkerdServe>;
