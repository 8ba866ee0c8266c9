// The operations `mneme bench serve` drives and their default shares (shared by the benchmark
// and the docs, which document only runs of the default mix).
export type OpName = 'recall' | 'remember' | 'supersede' | 'forget';
export type Mix = Record<OpName, number>;

export const DEFAULT_MIX: Mix = { recall: 0.8, remember: 0.15, supersede: 0.035, forget: 0.015 };
