// Values the global setups provide to tests and to vitest.config.ts: test/global-setup.ts
// (the workers project) and test/e2e/global-setup.ts (the e2e project).
declare module "vitest" {
  export interface ProvidedContext {
    upstreamUrl: string;
    /** The Worker's bundle for the e2e files (default environment), built once. */
    e2eBundleDir: string;
  }
}
export {};
