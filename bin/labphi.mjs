#!/usr/bin/env node
// The labphi launcher as an ES module, for callers that name this file (scripts, the Dockerfile,
// tests): the launcher itself is bin/labphi.cjs, the package's `bin`, which a codec command starts
// faster from (no ES module loader: issue #24 item 3, bench/cli-start.ts).
import "./labphi.cjs";
