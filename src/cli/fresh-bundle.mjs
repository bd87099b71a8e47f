// The launcher's bundle manifest and script loader for ES modules (tests, tools): the code is
// CommonJS, in fresh-bundle.cjs, which bin/labphi.cjs requires without Node's ES module loader.
export { current, freshBundle, loadScript } from "./fresh-bundle.cjs";
