/** The contract layer between `http` and `query`: re-exports only. */
export * from './errors.ts';
export * from './operations.ts';
export * from './params.ts';
export * from './validate.ts';
export * from './building.ts';
export * from './unit.ts';
export * from './business.ts';
export * from './envelope.ts';
export * from './encode.ts';
export * from './byte-writer.ts';
export * from './openapi.ts';
export * from './docs.ts';
export * from './bodies.ts';
export * from './facts.ts';
export * from './place.ts';
export * from './report.ts';
