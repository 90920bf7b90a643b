/** The process's profiling options (--cpu-prof, --heap-prof, their folders and intervals), for a thread it starts. */
export function threadArgv(execArgv?: readonly string[]): string[];
