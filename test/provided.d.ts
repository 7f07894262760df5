// Values that test/global-setup.ts provides to tests and to vitest.config.ts.
declare module "vitest" {
  export interface ProvidedContext {
    upstreamUrl: string;
  }
}
export {};
