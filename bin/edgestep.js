#!/usr/bin/env node
// The edgestep CLI. It is TypeScript run by Node's type stripping (Node 22.18+): `npx edgestep`
// and `npm exec edgestep` in this repository use the node@22 devDependency.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `edgestep needs Node 22.18 or later (this is ${process.version}): run it with npx edgestep, which uses the repository's Node 22`,
  );
  process.exit(2);
}
const { main } = await import("../src/cli/main.ts");
await main(process.argv);
